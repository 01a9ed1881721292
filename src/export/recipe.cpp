#include "export/recipe.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/text.hpp"
#include "lock/lock_file.hpp"
#include "project/project_file.hpp"
#include "project/schema.hpp"
#include "project/targets.hpp"
#include "resolve/pinned_request.hpp"
#include "resolve/resolver.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::recipes {

namespace fs = std::filesystem;

namespace {

// Every value spliced into a recipe passed a version parser first; quoting them as well keeps
// a spec such as ">=12.1,<12.5" one word for the shell.
std::string quoted(const std::string& word) { return "'" + word + "'"; }

// The lock's toolkit, cuDNN and CUDAHOSTCXX. Its versions become paths in the image: each must
// parse as a release (a cuDNN variant as cudaN).
Status plan_from_lock(const fs::path& lock_path, RecipePlan& plan) {
  auto lock = lock::read_lock_file(lock_path);
  if (!lock) return lock.error();
  const auto bad = [&](const std::string& field) {
    return make_error(ErrorKind::failure,
                      text::printable(lock_path.string(), text::message_limit) + ": " + field +
                          " is not a release version",
                      "run cudaenv lock to write it again");
  };
  if (!Version::parse(lock->toolkit.version)) return bad("toolkit.version");
  plan.toolkit = lock->toolkit.version;
  if (lock->cudnn) {
    const auto& variant = lock->cudnn->cuda_variant;
    if (!Version::parse(lock->cudnn->version)) return bad("cudnn.version");
    if (!text::starts_with(variant, "cuda") || variant.size() < 5 ||
        variant.find_first_not_of("0123456789", 4) != std::string::npos)
      return bad("cudnn.cuda_variant");
    plan.cudnn = lock->cudnn->version;
    plan.cudnn_variant = variant;
  }
  for (const auto& [name, target] : lock->targets) {
    if (plan.host_compiler.empty() && project::is_host_compiler_name(target.cudahostcxx))
      plan.host_compiler = target.cudahostcxx;
  }
  if (!lock->frameworks.empty()) plan.venv = image_venv;
  plan.torch = lock->frameworks.count("torch") > 0;
  return Ok{};
}

// Without a lock: the project's own resolution, through the request policy `resolve`, `lock` and
// `pip-args` use — a spec naming nvcc's version asks for its release, a torch/CUDA pair with no
// build is refused, and the framework pins choose the cuDNN (torch 2.5's wheels: 9.1).
Status plan_from_resolution(const project::ProjectFile& file, const manifest::Database& db,
                            const fs::path& project_file, RecipePlan& plan) {
  const resolve::Pins pins{file.cuda, file.cudnn, project::framework_pin(file, "torch"),
                           project::framework_pin(file, "tensorflow"),
                           project::framework_pin(file, "jax")};
  auto pinned = resolve::request_for_pins(db, pins, project_file.string());
  if (!pinned) return pinned.error();
  const auto resolution =
      resolve::resolve_without_suggestions(db, resolve::Target{}, pinned->request);
  const auto shown = text::printable(project_file.string(), text::message_limit);
  if (!resolution.ok())
    return make_error(
        ErrorKind::no_compatible_set,
        shown + ": its pins fit no set the database knows" +
            (resolution.rejected.empty() ? std::string()
                                         : ": " + resolution.rejected.front().candidate + ": " +
                                               resolution.rejected.front().reason),
        "cudaenv resolve (in the project) shows every candidate and the nearest fits");
  const auto& best = resolution.best();
  plan.toolkit = best.cuda->version.str();
  if (!file.cudnn) return Ok{};
  if (best.cudnn == nullptr)
    return make_error(ErrorKind::not_found,
                      shown + ": no cuDNN release the database knows matches cudnn = \"" +
                          file.cudnn->str() + "\" for CUDA " + plan.toolkit,
                      "pin one that `cudaenv resolve --cuda " + plan.toolkit +
                          "` lists, or write a lock with cudaenv lock");
  plan.cudnn = best.cudnn->version.str();
  plan.cudnn_variant = "cuda" + std::to_string(best.cuda->version.major());
  return Ok{};
}

// A toolkit that refuses the image's g++ (Ubuntu 24.04's 13) builds with the newest it accepts.
constexpr int image_gcc_major = 13;

void plan_host_compiler(const project::ProjectFile& file, const manifest::Database& db,
                        RecipePlan& plan) {
  if (!file.host_compiler.empty()) plan.host_compiler = file.host_compiler;
  if (!plan.host_compiler.empty()) return;
  const auto too_new = resolve::gcc_too_new(
      db, *Version::parse(plan.toolkit), Version::parse(std::to_string(image_gcc_major)).value());
  if (too_new) plan.host_compiler = "g++-" + std::to_string(*too_new);
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

// `apt-get install PACKAGE` unless COMMAND is there already (the base image may carry it).
std::string install_package_line(const std::string& command, const std::string& package) {
  return "command -v " + command + " >/dev/null || { apt-get update && apt-get install -y " +
         "--no-install-recommends " + package + " && rm -rf /var/lib/apt/lists/*; }";
}

// Python with its venv module: Ubuntu's python3 leaves ensurepip to python3-venv.
std::string install_venv_line() {
  return "python3 -c 'import ensurepip, venv' 2>/dev/null || { apt-get update && apt-get install "
         "-y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/*; }";
}

// `cd /project && [ASSIGNMENTS ]CUDAENV_MIRROR=… cudaenv`: the variables of cudaenv's run.
std::string cudaenv_in_project(const std::string& mirror, const std::string& assignments = "") {
  return "cd " + std::string(image_project_dir) + " && " + assignments + "CUDAENV_MIRROR=\"" +
         mirror + "\" CUDAENV_ROOT=" + image_data_root + " " + image_prefix + "/bin/cudaenv";
}

// `cudaenv verify --build-only` for the targets' architectures: what a build host without a GPU
// can check (the toolkit compiles and links for them, the cuDNN is in place).
std::string build_check(const RecipePlan& plan) {
  std::string line = "verify --build-only";
  for (const auto& arch : plan.archs) line += " --only-arch " + quoted(arch);
  return line;
}

// The steps, as shell lines: curl, the compiler verify builds with, the bundle from the mirror,
// the toolkit, then the check without a GPU.
std::vector<std::string> install_lines(const RecipePlan& plan, const std::string& mirror) {
  const auto compiler = plan.host_compiler.empty() ? std::string("g++") : plan.host_compiler;
  std::vector<std::string> lines = {install_package_line("curl", "curl ca-certificates"),
                                    install_package_line(compiler, compiler)};
  lines.push_back("curl -fsSL \"" + mirror + "/cudaenv/get\" | sh -s -- \"" + mirror + "\" " +
                  image_prefix);
  if (!plan.venv.empty()) {
    lines.push_back(install_venv_line());
    lines.push_back("python3 -m venv " + quoted(plan.venv));
  }
  auto install = cudaenv_in_project(mirror);
  if (plan.locked && !plan.venv.empty()) {
    // sync installs the locked wheels into it with their digests and proves each imports.
    install =
        cudaenv_in_project(mirror, "VIRTUAL_ENV=" + quoted(plan.venv) + " ") + " sync --frozen";
  } else if (plan.locked) {
    install += " sync --frozen";
  } else {
    install += " install " + quoted(plan.toolkit);
    if (!plan.cudnn.empty()) install += " --cudnn " + quoted(plan.cudnn);
  }
  lines.push_back(install);
  lines.push_back(cudaenv_in_project(mirror) + " " + build_check(plan));
  return lines;
}

// The check with a GPU: the device query, and torch's own GPU operation when torch is locked.
std::string runtime_check(const RecipePlan& plan) {
  return plan.torch ? "verify --torch" : "verify";
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
  if (plan.locked) {
    if (auto read = plan_from_lock(lock_path, plan); !read) return read.error();
  } else {
    if (auto resolved = plan_from_resolution(*file, db, project_file, plan); !resolved)
      return resolved.error();
  }
  plan_host_compiler(*file, db, plan);
  if (auto named =
          project::name_gpu_archs(file->targets, db.gpu_model_archs(),
                                  text::printable(project_file.string(), text::message_limit));
      !named)
    return named.error();
  plan.archs = declared_archs(*file);
  // The project's own environment (a relative path its grammar checked) where it names one.
  if (!plan.venv.empty() && !file->venv.empty())
    plan.venv = std::string(image_project_dir) + "/" + file->venv;
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
  for (const auto& [name, value] : image_environment(plan))
    out << "ENV " << name << "=\"" << value << "\"\n";
  out << "HEALTHCHECK CMD " << image_prefix << "/bin/cudaenv " << runtime_check(plan)
      << " >/dev/null || exit 1\n";
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
  for (const auto& [name, value] : image_environment(plan))
    out << "    export " << name << "=\"" << value << "\"\n";
  // %test runs at the end of every build, mostly on hosts without a GPU (or without --nv): there
  // it repeats the build check; with a GPU it runs the device query.
  out << "\n%test\n    if nvidia-smi -L >/dev/null 2>&1; then " << image_prefix << "/bin/cudaenv "
      << runtime_check(plan) << "; else " << image_prefix << "/bin/cudaenv " << build_check(plan)
      << "; fi\n";
  return out.str();
}

}  // namespace cudaenv::recipes
