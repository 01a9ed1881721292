#include "activate/shims.hpp"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <set>

#include <sys/stat.h>

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "activate/toolkit_env.hpp"
#include "core/files.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

namespace {

// A file's identity: two spellings (`//`, a symlinked directory, a relative PATH entry, a hard
// link) of one file have the same device and inode.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

std::optional<FileIdentity> identity_of(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  return FileIdentity{status.st_dev, status.st_ino};
}

// The shim program as this process knows it: the running program (however it was reached: a
// hard link has no name to recognise it by), and the shim program installed beside cudaenv (what
// `cudaenv which` must not name either).
std::vector<FileIdentity> shim_identities() {
  std::vector<FileIdentity> identities;
  if (auto self = identity_of("/proc/self/exe")) identities.push_back(*self);
  if (auto installed = identity_of(paths::companion_program(shim_program_name)))
    identities.push_back(*installed);
  return identities;
}

bool is_shim(const fs::path& program, const std::vector<FileIdentity>& shims) {
  const auto identity = identity_of(program);
  return identity && std::find(shims.begin(), shims.end(), *identity) != shims.end();
}

// The first executable `tool` on `search_path` that is not a shim, however PATH spells it.
std::optional<std::string> real_program_on_path(const std::string& tool,
                                                const std::string& search_path) {
  const auto shims = shim_identities();
  for (const auto& entry : text::split(search_path, ':')) {
    const auto candidate = (entry.empty() ? std::string(".") : entry) + "/" + tool;
    if (is_executable_file(candidate) && !is_shim(candidate, shims)) return candidate;
  }
  return std::nullopt;
}

std::set<std::string> installed_tools(const install::Store& store) {
  std::set<std::string> tools;
  std::error_code ec;
  for (const auto& toolkit : install::installed_toolkits(store, install::Receipts::skip)) {
    for (fs::directory_iterator it(toolkit.path / "bin", ec), end; !ec && it != end;
         it.increment(ec)) {
      if (is_executable_file(it->path())) tools.insert(it->path().filename().string());
    }
  }
  return tools;
}

// Replaces (or creates) `link` atomically: a shim that stays is never missing, even briefly. The
// temporary name is this process's own, so nothing another process does can take it away.
Status place_link(const fs::path& link, const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  if (fs::read_symlink(link, ec) == target && !ec) return Ok{};
  const auto temporary =
      link.parent_path() / (".new-" + link.filename().string() + "-" + std::to_string(::getpid()) +
                            "-" + std::to_string(counter++));
  fs::create_symlink(target, temporary, ec);
  if (!ec) fs::rename(temporary, link, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return make_error(ErrorKind::failure,
                      "cannot create shim " + link.string() + ": " + ec.message());
  }
  return Ok{};
}

int shim_depth(const Environment& env) {
  const auto text = env.get(shim_depth_variable).value_or("0");
  int depth = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), depth);
  return error == std::errc() && end == text.data() + text.size() && depth > 0 ? depth : 0;
}

}  // namespace

Status check_shim_depth(const Environment& env) {
  if (shim_depth(env) < shim_depth_limit) return Ok{};
  return make_error(ErrorKind::not_found,
                    "the shims ran each other " + std::to_string(shim_depth_limit) +
                        " times in a row (" + shim_depth_variable +
                        "): a program on PATH leads back to a shim",
                    "check the PATH entries after the shims directory");
}

std::optional<Error> runtime_only_refusal(const fs::path& prefix, const std::string& version,
                                          const std::string& tool) {
  static const std::set<std::string> compiler_programs = {
      "nvcc", "cudafe++", "fatbinary", "nvlink", "bin2c", "cicc", "nvprune", "cu++filt"};
  if (!compiler_programs.contains(tool) || has_compiler(prefix) ||
      is_executable_file(prefix / "bin" / tool))
    return std::nullopt;
  return make_error(ErrorKind::not_found,
                    tool + ": CUDA " + version + " here is runtime-only (" + prefix.string() +
                        " came from a package index, whose CUDA " +
                        version.substr(0, version.find('.')) +
                        " wheels carry no nvcc): no other CUDA's compiler is used in its place",
                    "for a compiler, install the release from NVIDIA's archives: cudaenv install " +
                        version + " --source redist --force");
}

Result<ToolTarget> resolve_tool(const Environment& current, const fs::path& cwd,
                                const std::string& tool) {
  if (tool.empty() || tool.find('/') != std::string::npos || tool == "." || tool == "..")
    return make_error(ErrorKind::usage, "\"" + tool + "\" is not a tool name",
                      "name a program such as nvcc");
  auto activated = activate_here(current, cwd);
  if (!activated) return activated.error();
  Environment environment = activated->environment;
  environment.unset(activation_variable);
  environment.set(shim_depth_variable, std::to_string(shim_depth(current) + 1));
  if (activated->toolkit) {
    const auto path = activated->toolkit->path / "bin" / tool;
    if (auto refusal =
            runtime_only_refusal(activated->toolkit->path, activated->toolkit->version.str(), tool))
      return *refusal;
    if (!is_executable_file(path))
      return make_error(ErrorKind::not_found,
                        tool + " is not part of CUDA " + activated->toolkit->version.str() +
                            " as installed (" + path.parent_path().string() + ")",
                        "install the component that provides it: cudaenv install " +
                            activated->toolkit->version.str() + " --force --components …");
    if (is_shim(path, shim_identities()))
      return make_error(ErrorKind::not_found, path.string() + " is a shim itself",
                        "reinstall the toolkit: cudaenv install " +
                            activated->toolkit->version.str() + " --force");
    return ToolTarget{path.string(), std::move(environment)};
  }
  auto found = real_program_on_path(tool, environment.get("PATH").value_or(""));
  if (!found) {
    // Builds here still find the system's toolkit (CMake and torch look in $CUDA_HOME and
    // /usr/local/cuda): name it, so the fix is one step.
    const auto& system = activated->here.system_prefix;
    const auto has_tool = !system.empty() && is_executable_file(fs::path(system) / "bin" / tool);
    return make_error(ErrorKind::not_found,
                      tool + ": no CUDA version is selected here and there is none on PATH" +
                          (has_tool ? "; the system's toolkit " + system + " (" +
                                          activated->here.system_origin + ") has one"
                                    : ""),
                      has_tool
                          ? "put " + system + "/bin on PATH, or select one: cudaenv use <version>"
                          : "select one: cudaenv use <version> (or set CUDAENV_VERSION)");
  }
  return ToolTarget{*found, std::move(environment)};
}

Result<std::vector<std::string>> rehash(const install::Store& store, const fs::path& shim_program) {
  if (!is_executable_file(shim_program))
    return make_error(ErrorKind::failure,
                      "the shim program " + shim_program.string() + " is missing",
                      "reinstall cudaenv (scripts/setup)");
  const auto dir = shims_directory(store);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorKind::failure, "cannot create " + dir.string() + ": " + ec.message());
  // One rehash at a time: each sees the store as the last install or uninstall left it, and none
  // removes a shim another has just placed.
  auto lock = install::InstallLock::acquire(store.root / ".lock-shims", {});
  if (!lock) return lock.error();
  const auto tools = installed_tools(store);
  for (const auto& tool : tools) {
    if (auto placed = place_link(dir / tool, shim_program); !placed) return placed.error();
  }
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!tools.contains(it->path().filename().string())) stale.push_back(it->path());
  }
  for (const auto& path : stale) fs::remove(path, ec);
  return std::vector<std::string>(tools.begin(), tools.end());
}

}  // namespace cudaenv::activate
