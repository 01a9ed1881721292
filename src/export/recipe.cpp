#include "export/recipe.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/text.hpp"
#include "lock/lock_file.hpp"
#include "project/project_file.hpp"
#include "project/targets.hpp"

namespace cudaenv::recipes {

namespace fs = std::filesystem;

namespace {

// Every value spliced into a recipe passed a version parser first; quoting them as well keeps
// a spec such as ">=12.1,<12.5" one word for the shell.
std::string quoted(const std::string& word) { return "'" + word + "'"; }

Result<std::string> locked_toolkit(const fs::path& lock_path) {
  auto lock = lock::read_lock_file(lock_path);
  if (!lock) return lock.error();
  if (!Version::parse(lock->toolkit.version))
    return make_error(ErrorKind::failure,
                      lock_path.string() + ": toolkit.version is not a release version",
                      "run cudaenv lock to write it again");
  return lock->toolkit.version;
}

Result<std::string> newest_known(const VersionSpec& spec, const manifest::Database& db,
                                 const fs::path& project_file) {
  std::vector<Version> checked;
  for (const auto& release : db.cuda_releases)
    if (!release.unchecked()) checked.push_back(release.version);
  if (auto best = spec.best_match(checked)) return best->str();
  return make_error(ErrorKind::not_found,
                    text::printable(project_file.string(), text::message_limit) +
                        ": no CUDA release the database knows matches cuda = \"" + spec.str() +
                        "\"",
                    "pin a release that `cudaenv resolve` lists, or run cudaenv db update");
}

// NVIDIA_REQUIRE_CUDA: with minor-version compatibility the family's first release is enough
// (12.4 runs on any driver of 12.0 and later), so hosts are not refused needlessly.
void set_requirement(RecipePlan& plan, const manifest::Database& db) {
  const auto toolkit = *Version::parse(plan.toolkit);
  for (const auto& family : db.cuda_families) {
    if (family.major == toolkit.major()) {
      plan.require_cuda = "cuda>=" + std::to_string(toolkit.major()) + ".0";
      plan.require_reason = "CUDA " + std::to_string(family.major) + ".x runs on any driver from " +
                            family.minor_compat_floor.str() + " on (minor-version compatibility)";
      return;
    }
  }
  plan.require_cuda = "cuda>=" + toolkit.major_minor().str();
  plan.require_reason = "the database knows no minor-version compatibility for CUDA " +
                        std::to_string(toolkit.major()) + ".x: the toolkit's own release";
}

std::vector<std::string> declared_archs(const project::ProjectFile& file) {
  std::set<Version> unique;
  for (const auto& target : file.targets) unique.insert(target.archs.begin(), target.archs.end());
  std::vector<std::string> archs;
  for (const auto& arch : unique) archs.push_back(arch.str());
  return archs;
}

std::string joined(const std::vector<std::string>& items, bool digits) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ';';
    out += digits ? project::arch_digits(*Version::parse(item)) : item;
  }
  return out;
}

std::string toolkit_dir(const RecipePlan& plan) {
  return std::string(image_data_root) + "/toolkits/" + plan.toolkit;
}

// The install steps, as shell lines: the bundle from the mirror, then the toolkit.
std::vector<std::string> install_lines(const RecipePlan& plan, const std::string& mirror) {
  const std::string cudaenv = std::string(image_prefix) + "/bin/cudaenv";
  std::vector<std::string> lines = {
      "command -v curl >/dev/null || { apt-get update && apt-get install -y "
      "--no-install-recommends curl ca-certificates && rm -rf /var/lib/apt/lists/*; }",
      "curl -fsSL \"" + mirror + "/cudaenv/get\" | sh -s -- \"" + mirror + "\" " + image_prefix};
  std::string install = "cd " + std::string(image_project_dir) + " && CUDAENV_MIRROR=\"" + mirror +
                        "\" CUDAENV_ROOT=" + image_data_root + " " + cudaenv;
  if (plan.locked) {
    install += " sync --frozen";
  } else {
    install += " install " + quoted(plan.toolkit);
    if (!plan.cudnn_spec.empty()) install += " --cudnn " + quoted(plan.cudnn_spec);
  }
  lines.push_back(install);
  return lines;
}

// NAME=value pairs the image's environment holds.
std::vector<std::pair<std::string, std::string>> environment(const RecipePlan& plan) {
  const auto dir = toolkit_dir(plan);
  std::vector<std::pair<std::string, std::string>> vars = {
      {"CUDAENV_ROOT", image_data_root},
      {"CUDA_HOME", dir},
      {"CUDA_PATH", dir},
      {"CUDAToolkit_ROOT", dir},
      {"CUDACXX", dir + "/bin/nvcc"},
      {"CUDAENV_ACTIVE", plan.toolkit},
      {"PATH", dir + "/bin:" + image_prefix + "/bin:$PATH"},
      {"LD_LIBRARY_PATH", dir + "/lib64"},
      {"NVIDIA_REQUIRE_CUDA", plan.require_cuda}};
  if (!plan.archs.empty()) {
    vars.emplace_back("TORCH_CUDA_ARCH_LIST", joined(plan.archs, false));
    vars.emplace_back("CMAKE_CUDA_ARCHITECTURES", joined(plan.archs, true));
  }
  return vars;
}

std::string header(const RecipePlan& plan, const std::string& what) {
  std::ostringstream out;
  out << "# " << what << " written by cudaenv " << plan.cudaenv_version << " (cudaenv export) from "
      << (plan.locked ? ".cudaenv and .cudaenv.lock" : ".cudaenv") << ": CUDA " << plan.toolkit
      << ".\n# NVIDIA_REQUIRE_CUDA=" << plan.require_cuda << ": " << plan.require_reason << ".\n";
  if (plan.archs.empty())
    out << "# No [targets] in .cudaenv: no TORCH_CUDA_ARCH_LIST / CMAKE_CUDA_ARCHITECTURES set.\n";
  return out.str();
}

}  // namespace

Result<RecipePlan> plan_recipe(const fs::path& project_file, const manifest::Database& db,
                               const std::string& cudaenv_version) {
  auto file = project::read_project_file(project_file);
  if (!file) return file.error();
  if (!file->cuda)
    return make_error(
        ErrorKind::usage,
        text::printable(project_file.string(), text::message_limit) + " pins no cuda version",
        "pin one with cudaenv use VERSION");
  RecipePlan plan;
  plan.cudaenv_version = cudaenv_version;
  plan.project_file = project_file;
  std::error_code ec;
  const auto lock_path = lock::lock_path_for(project_file);
  plan.locked = fs::exists(lock_path, ec);
  auto toolkit =
      plan.locked ? locked_toolkit(lock_path) : newest_known(*file->cuda, db, project_file);
  if (!toolkit) return toolkit.error();
  plan.toolkit = *toolkit;
  if (file->cudnn) plan.cudnn_spec = file->cudnn->str();
  plan.archs = declared_archs(*file);
  set_requirement(plan, db);
  return plan;
}

std::string render_dockerfile(const RecipePlan& plan) {
  std::ostringstream out;
  out << header(plan, "Dockerfile")
      << "# Build: docker build --build-arg CUDAENV_MIRROR=<mirror URL> -f Dockerfile .\n"
      << "#   (a mirror made with cudaenv mirror create --with-cudaenv; run from the project)\n\n"
      << "FROM " << plan.base_image << "\nARG CUDAENV_MIRROR\n"
      << "WORKDIR " << image_project_dir << "\nCOPY .cudaenv"
      << (plan.locked ? " .cudaenv.lock" : "") << " ./\n";
  for (const auto& line : install_lines(plan, "${CUDAENV_MIRROR}")) out << "RUN " << line << '\n';
  out << "# The environment the cudaenv shell hook sets for CUDA " << plan.toolkit << ".\n";
  for (const auto& [name, value] : environment(plan))
    out << "ENV " << name << "=\"" << value << "\"\n";
  out << "HEALTHCHECK CMD " << image_prefix << "/bin/cudaenv verify >/dev/null || exit 1\n";
  return out.str();
}

std::string render_apptainer(const RecipePlan& plan) {
  std::ostringstream out;
  out << header(plan, "Apptainer definition")
      << "# Build: apptainer build --build-arg CUDAENV_MIRROR=<mirror URL> image.sif cudaenv.def\n"
      << "#   (a mirror made with cudaenv mirror create --with-cudaenv; run from the project)\n\n"
      << "Bootstrap: docker\nFrom: " << plan.base_image << "\n\n%arguments\n"
      << "    CUDAENV_MIRROR=http://mirror.invalid\n\n%files\n"
      << "    .cudaenv " << image_project_dir << "/.cudaenv\n";
  if (plan.locked) out << "    .cudaenv.lock " << image_project_dir << "/.cudaenv.lock\n";
  out << "\n%post\n    set -e\n";
  for (const auto& line : install_lines(plan, "{{ CUDAENV_MIRROR }}"))
    out << "    " << line << '\n';
  out << "\n%environment\n";
  for (const auto& [name, value] : environment(plan))
    out << "    export " << name << "=\"" << value << "\"\n";
  out << "\n%test\n    " << image_prefix << "/bin/cudaenv verify\n";
  return out.str();
}

}  // namespace cudaenv::recipes
