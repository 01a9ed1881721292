#include "here/here.hpp"

#include <unistd.h>

#include <algorithm>

#include "core/files.hpp"
#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "core/text.hpp"
#include "forward/compat_library.hpp"
#include "probe/kernel_module.hpp"
#include "probe/toolkits.hpp"
#include "project/stores.hpp"

namespace cudaenv::here {

namespace fs = std::filesystem;

namespace {

// The hook computes Here on every prompt: a toolkit outside the stores is named by its files
// (version.json, the packages that installed it), never by running its nvcc.
class NoPrograms final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const Command&) override {
    return make_error(ErrorKind::failure, "no program is run while deciding what applies here");
  }
};

// nvcc's own version pinned (12.4.131; releases of CUDA 11 and later have small patch levels).
// This path loads no database to name its release, so the hint is the no-SPEC install, which
// installs the project's pin as the release that ships that nvcc.
bool names_nvcc_version(const VersionSpec& spec) {
  if (!spec.is_exact_beyond(2)) return false;
  const auto version = Version::parse(spec.str());
  return version && version->major() >= 11 && version->patch() >= 10;
}

std::string install_command(const project::Selection& selection) {
  if (selection.source == project::SelectionSource::project_file &&
      names_nvcc_version(*selection.cuda))
    return "cudaenv install (in " + selection.file.parent_path().string() +
           "; it installs the release that ships nvcc " + selection.cuda->str() + ")";
  return "cudaenv install " + selection.cuda->str();
}

Error not_installed(const std::string& what, const std::string& install) {
  return make_error(ErrorKind::not_found, what + " is not installed", "run: " + install);
}

Result<project::Selection> selection_for(const Environment& env, const fs::path& cwd,
                                         const std::optional<VersionSpec>& forced_cuda) {
  if (forced_cuda) {
    project::Selection selection;
    selection.cuda = *forced_cuda;
    selection.source = project::SelectionSource::command_line;
    return selection;
  }
  return project::select(env, cwd);
}

bool in_system_store(const install::Store& store, const fs::path& path) {
  return std::any_of(store.shared_roots.begin(), store.shared_roots.end(), [&](const auto& root) {
    const auto relative = path.lexically_relative(root);
    return !relative.empty() && *relative.begin() != "..";
  });
}

// Toolkits installed outside cudaenv where NVIDIA's installers put them, newest name first.
// probe's list of installer locations, so the two never drift apart.
std::vector<std::string> system_prefixes(const Sysroot& sysroot) {
  auto prefixes = probe::versioned_prefixes(sysroot);
  std::sort(prefixes.rbegin(), prefixes.rend());
  prefixes.emplace_back(probe::opt_cuda_prefix);
  return prefixes;
}

// A pin that a toolkit outside the stores satisfies: /usr/local/cuda-13.0 holding 13.0.2 serves
// `cuda = "13.0.2"` (and "13.0", and nvcc's "13.0.88") as a store's 13.0.2 would.
std::optional<ServingToolkit> system_match(const VersionSpec& spec, const Sysroot& sysroot,
                                           std::vector<std::string>& trace) {
  NoPrograms no_programs;
  std::optional<probe::DpkgPackages> packages;
  for (const auto& prefix : system_prefixes(sysroot)) {
    if (!sysroot.is_executable_file(prefix + "/bin/nvcc")) continue;
    auto version = probe::read_toolkit_version(sysroot, no_programs, prefix);
    if (!version || !version->release) {
      if (!packages)
        packages = probe::parse_dpkg_status(sysroot.read_file("/var/lib/dpkg/status").value_or(""));
      version = probe::read_toolkit_version(sysroot, no_programs, prefix, *packages);
    }
    if (!version || (!version->release && !version->nvcc)) continue;
    std::vector<Version> releases;
    if (version->release) releases.push_back(*version->release);
    const auto named = version->release ? version->release->str() : version->nvcc->str();
    if (!project::spec_names_toolkit(spec, releases, version->nvcc)) {
      trace.push_back("system toolkit " + prefix + " (" + named + ") does not match " + spec.str());
      continue;
    }
    trace.push_back("system toolkit " + prefix + " (" + named + ") matches " + spec.str());
    ServingToolkit serving;
    serving.installed.path = sysroot.host_path(prefix);
    serving.installed.version = version->release ? *version->release : *version->nvcc;
    serving.place = ToolkitPlace::system_prefix;
    serving.machine_path = prefix;
    return serving;
  }
  return std::nullopt;
}

std::string store_list(const install::Store& store) {
  std::vector<std::string> roots{store.root.string()};
  for (const auto& root : store.shared_roots) roots.push_back(root.string() + " (system store)");
  return text::join(roots, ", ");
}

// The selection's toolkit: the newest match in the stores, else a system toolkit that satisfies
// the pin; each checked for ownership before anything points at it.
Status find_toolkit(const Sysroot& sysroot, Here& here) {
  const auto& selection = here.selection;
  if (auto match = project::installed_match(selection, here.store, install::Receipts::skip)) {
    const auto place = in_system_store(here.store, match->path) ? ToolkitPlace::system_store
                                                                : ToolkitPlace::user_store;
    here.trace.push_back("store match for " + selection.cuda->str() + ": " + match->path.string());
    here.toolkit = ServingToolkit{std::move(*match), place, ""};
  } else {
    here.trace.push_back("no toolkit in the stores matches " + selection.cuda->str());
    here.toolkit = system_match(*selection.cuda, sysroot, here.trace);
  }
  if (!here.toolkit) {
    here.missing =
        not_installed("CUDA " + describe_selection(selection), install_command(selection));
    here.trace.emplace_back("nothing serves it: the environment stays the system's");
    return Ok{};
  }
  // The one place every path that runs a toolkit's programs goes through (env, exec, which, the
  // hook, the shims, verify): its programs and libraries are checked before anything points at
  // them.
  return ownership::check_prefix(here.toolkit->installed.path, ownership::toolkit_layout(),
                                 "toolkit");
}

Status find_cudnn(Here& here) {
  const auto& selection = here.selection;
  if (!selection.cudnn || !here.toolkit) return Ok{};
  const int major = here.toolkit->installed.version.major();
  here.cudnn =
      project::installed_cudnn_match(*selection.cudnn, major, here.store, install::Receipts::skip);
  if (!here.cudnn) {
    here.trace.push_back("no cuDNN in the stores matches " + selection.cudnn->str() + " for CUDA " +
                         std::to_string(major));
    here.missing =
        not_installed("cuDNN " + selection.cudnn->str() + " for CUDA " + std::to_string(major) +
                          " (from " + project::describe_source(selection) + ")",
                      "cudaenv install " + here.toolkit->installed.version.str() + " --cudnn " +
                          selection.cudnn->str());
    return Ok{};
  }
  here.trace.push_back("cuDNN match for " + selection.cudnn->str() + ": " +
                       here.cudnn->path.string());
  return ownership::check_prefix(here.cudnn->path, ownership::cudnn_layout(), "cuDNN");
}

// The models forward compatibility was allowed for when the library was installed
// (<store>/compat/<X.Y>/gpus, the database's names of data-center models, one per line, written by
// `cudaenv compat install`): a GPU the kernel names that is none of them keeps the library out.
std::vector<std::string> approved_gpus(const fs::path& compat_dir) {
  auto text = read_bounded_file(compat_dir / "gpus", 16384);
  if (!text) return {};
  std::vector<std::string> models;
  for (const auto& line : text::lines(*text))
    if (!text::trim(line).empty()) models.emplace_back(text::trim(line));
  return models;
}

// The stores' compat/<X.Y> directories for this toolkit's minor or a newer one, lowest first.
std::vector<std::pair<Version, fs::path>> compat_candidates(const install::Store& store,
                                                            const Version& toolkit) {
  std::vector<std::pair<Version, fs::path>> found;
  std::vector<fs::path> roots{store.root};
  roots.insert(roots.end(), store.shared_roots.begin(), store.shared_roots.end());
  for (const auto& root : roots) {
    std::error_code ec;
    for (fs::directory_iterator it(root / "compat", ec), end; !ec && it != end; it.increment(ec)) {
      const auto name = it->path().filename().string();
      const auto version = Version::parse(name);
      if (!version || name.front() == '.' || *version < toolkit.major_minor()) continue;
      if (version->major() != toolkit.major() && version->major() != toolkit.major() + 1) continue;
      found.emplace_back(*version, it->path());
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return found;
}

// A forward-compatibility library for the serving toolkit goes first on LD_LIBRARY_PATH only where
// its own note and NVIDIA's rule say it runs (forward/decision.hpp); the kernel files are read only
// when one is installed.
Status find_forward_compat(const Sysroot& sysroot, Here& here) {
  if (!here.toolkit || here.missing) return Ok{};
  const auto candidates = compat_candidates(here.store, here.toolkit->installed.version);
  if (candidates.empty()) return Ok{};
  const auto module = probe::kernel_module_driver_version(sysroot);
  const auto gpus = probe::kernel_gpu_models(sysroot);
  for (const auto& [cuda, dir] : candidates) {
    auto library = forward::find_compat_library(dir / "lib");
    if (!library) continue;
    if (auto trusted = ownership::check_prefix(dir, {{}, {"lib"}}, "forward-compatibility library");
        !trusted)
      return trusted.error();
    const auto approved = approved_gpus(dir);
    auto decision = forward::decide(*library, module, gpus, [&](const std::string& gpu) {
      return std::any_of(approved.begin(), approved.end(),
                         [&](const auto& model) { return text::gpu_is_model(gpu, model); });
    });
    here.trace.push_back("forward compatibility " + dir.string() + ": " + decision.reason);
    const bool use = decision.use();
    if (use || !here.forward_compat)
      here.forward_compat = ForwardCompat{dir / "lib", cuda, library->version, std::move(decision)};
    if (use) break;
  }
  return Ok{};
}

// What builds get when nothing here selects a toolkit (or none serves the selection): what a
// shell reaches, then where CMake's FindCUDAToolkit and torch's cpp_extension look next.
void note_system_toolkit(const Environment& base, const Sysroot& sysroot, Here& here) {
  if (const auto nvcc = first_nvcc_on_path(base); !nvcc.empty()) {
    here.system_prefix = reachable_system_prefix(base);
    here.system_origin = "nvcc on PATH";
  } else if (auto home = reachable_system_prefix(base); !home.empty()) {
    here.system_prefix = std::move(home);
    here.system_origin = "CUDA_HOME";
  } else if (sysroot.is_executable_file(std::string(probe::distro_nvcc_dir) + "/nvcc")) {
    here.system_prefix = sysroot.host_path("/usr").string();
    here.system_origin = "nvidia-cuda-toolkit (apt)";
  } else if (sysroot.is_executable_file(std::string(probe::default_link_prefix) + "/bin/nvcc")) {
    const auto real = sysroot.canonical(probe::default_link_prefix);
    here.system_prefix = sysroot.host_path(real.value_or(probe::default_link_prefix)).string();
    here.system_origin = probe::default_link_prefix;
  }
  here.trace.push_back(here.system_prefix.empty()
                           ? "the system's toolkit: none (no nvcc on PATH, no CUDA_HOME, no "
                             "nvidia-cuda-toolkit, no /usr/local/cuda)"
                           : "the system's toolkit: " + here.system_prefix + " (" +
                                 here.system_origin + ")");
}

}  // namespace

std::string first_nvcc_on_path(const Environment& env) {
  for (const auto& entry : text::split(env.get("PATH").value_or(""), ':')) {
    if (entry.empty()) continue;
    const auto nvcc = fs::path(entry) / "nvcc";
    if (::access(nvcc.c_str(), X_OK) == 0) return nvcc.string();
  }
  return "";
}

std::string reachable_system_prefix(const Environment& env) {
  if (const auto nvcc = first_nvcc_on_path(env); !nvcc.empty()) {
    std::error_code ec;
    const auto real = fs::weakly_canonical(nvcc, ec);
    return (ec ? fs::path(nvcc) : real).parent_path().parent_path().string();
  }
  if (const auto home = env.get_nonempty("CUDA_HOME");
      home && ::access((fs::path(*home) / "bin" / "nvcc").c_str(), X_OK) == 0)
    return *home;
  return "";
}

std::string describe_selection(const project::Selection& selection) {
  const auto spec = selection.cuda ? selection.cuda->str() : std::string("system");
  return spec + " (from " + project::describe_source(selection) + ")";
}

std::string describe_place(const Here& here) {
  if (!here.toolkit) return "nothing";
  switch (here.toolkit->place) {
    case ToolkitPlace::user_store: return "the user's store " + here.store.root.string();
    case ToolkitPlace::system_store: return "a system store";
    case ToolkitPlace::system_prefix:
      return "a system toolkit (" + here.toolkit->machine_path + ")";
  }
  return "nothing";
}

std::string trace_lines(const Here& here) {
  std::string lines;
  for (const auto& line : here.trace)
    lines += "cudaenv: debug: " + text::printable(line, text::message_limit) + "\n";
  return lines;
}

bool debug_enabled(const Environment& env) {
  const auto value = env.get_nonempty("CUDAENV_DEBUG");
  return value && *value != "0";
}

namespace {

Result<Here> decide(const Environment& base, const fs::path& cwd,
                    const std::optional<VersionSpec>& forced_cuda, const Sysroot* machine) {
  Here here;
  here.directory = cwd;
  auto selection = selection_for(base, cwd, forced_cuda);
  if (!selection) return selection.error();
  here.selection = std::move(*selection);
  here.trace.push_back("selection: " + describe_selection(here.selection));
  const Sysroot from_environment(machine ? fs::path("/") : paths::sysroot(base));
  const Sysroot& sysroot = machine ? *machine : from_environment;
  if (!here.selection.cuda) {
    note_system_toolkit(base, sysroot, here);
    return here;
  }
  here.store = project::store_for(base);
  here.trace.push_back("stores consulted: " + store_list(here.store));
  if (auto trusted = ownership::check_data_root(here.store.root); !trusted) return trusted.error();
  if (auto found = find_toolkit(sysroot, here); !found) return found.error();
  if (auto found = find_cudnn(here); !found) return found.error();
  if (auto found = find_forward_compat(sysroot, here); !found) return found.error();
  if (here.missing) note_system_toolkit(base, sysroot, here);
  return here;
}

}  // namespace

Result<Here> find_here(const Environment& base, const fs::path& cwd,
                       const std::optional<VersionSpec>& forced_cuda, const Sysroot* machine) {
  auto here = decide(base, cwd, forced_cuda, machine);
  // CUDAENV_DEBUG=1: the rules that decided, on stderr (stdout may be eval'd by a shell).
  if (here && debug_enabled(base)) {
    const auto lines = trace_lines(*here);
    (void)!::write(STDERR_FILENO, lines.data(), lines.size());
  }
  return here;
}

}  // namespace cudaenv::here
