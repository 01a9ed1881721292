#include "probe/toolkits.hpp"

#include <algorithm>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/ownership.hpp"
#include "core/text.hpp"
#include "probe/executables.hpp"

namespace cudaenv::probe {

namespace {

struct Candidate {
  std::string path;  // as found, before following links
  ToolkitOrigin origin;
};

std::string parent_of(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

// NVIDIA's pip wheels install nvcc as site-packages/nvidia/cuda_nvcc (12.x) or
// site-packages/nvidia/cu13 (13.x), with "nvidia_cuda_nvcc[_cuNN]-<version>.dist-info" two levels
// up; toolkits assembled from wheels keep those records in a dist-info/ folder of their own.
// `wheel` is the name after "nvidia_": "cuda_nvcc", "cuda_runtime".
std::optional<Version> wheel_version(const Sysroot& sysroot, const std::string& prefix,
                                     const std::string& wheel) {
  const std::regex record("nvidia_" + wheel + R"((_cu[0-9]+)?-([0-9.]+)\.dist-info)");
  for (const auto& directory : {prefix + "/dist-info", prefix + "/../.."}) {
    for (const auto& name : sysroot.list_directory(directory)) {
      std::smatch match;
      if (std::regex_match(name, match, record)) return Version::parse(match[2].str());
    }
  }
  return std::nullopt;
}

// The runtime library's full file name carries its version (libcudart.so.12.4.127) in the
// runfile and apt layouts; wheels only ship libcudart.so.13, their dist-info names it instead.
std::optional<Version> cudart_version(const Sysroot& sysroot, const std::string& prefix) {
  if (auto wheel = wheel_version(sysroot, prefix, "cuda_runtime")) return wheel;
  static const std::regex library(R"(libcudart\.so\.([0-9]+\.[0-9]+\.[0-9]+))");
  for (const char* directory : {"/lib64", "/lib", "/targets/x86_64-linux/lib"}) {
    for (const auto& name : sysroot.list_directory(prefix + directory)) {
      std::smatch match;
      if (std::regex_match(name, match, library)) return Version::parse(match[1].str());
    }
  }
  return std::nullopt;
}

std::optional<Version> run_nvcc_version(ProcessRunner& runner, const Sysroot& sysroot,
                                        const std::string& nvcc) {
  Command command{
      {runnable(sysroot, nvcc), "--version"}, std::nullopt, std::chrono::milliseconds(10000)};
  auto result = runner.run(command);
  if (!result || !result->succeeded()) return std::nullopt;
  return parse_nvcc_version_output(result->out);
}

// A wrapper script on PATH (`exec /opt/x/bin/nvcc "$@"`) hides the real prefix; nvcc's dry run
// names the directory it really runs from ("#$ _HERE_=/usr/local/cuda-13.0/bin").
std::optional<std::string> nvcc_real_bin_dir(ProcessRunner& runner, const Sysroot& sysroot,
                                             const std::string& nvcc) {
  Command command{{runnable(sysroot, nvcc), "-dryrun", "-E", "-x", "cu", "/dev/null"},
                  std::nullopt,
                  std::chrono::milliseconds(10000)};
  auto result = runner.run(command);
  if (!result) return std::nullopt;
  for (const auto& line : text::lines(result->err + result->out)) {
    constexpr std::string_view marker = "#$ _HERE_=";
    if (text::starts_with(line, marker)) return sysroot.machine_path(line.substr(marker.size()));
  }
  return std::nullopt;
}

// Debian's and Ubuntu's nvidia-cuda-toolkit keeps nvcc's real directory in
// /usr/lib/nvidia-cuda-toolkit/bin and everything a build uses in /usr (bin, include, the
// multiarch lib directory): the toolkit's prefix, its CUDA_HOME, is /usr.

std::string prefix_of_nvcc(const std::string& nvcc) {
  const auto bin = parent_of(nvcc);
  return bin == distro_nvcc_dir ? "/usr" : parent_of(bin);
}

std::vector<Candidate> path_nvcc_candidates(const ToolkitSearch& search) {
  std::vector<Candidate> found;
  const auto path = search.env.get("PATH").value_or("");
  for (const auto& directory : text::split(path, ':')) {
    if (directory.empty() || directory.front() != '/') continue;
    const auto nvcc = directory + "/nvcc";
    if (!search.sysroot.is_executable_file(nvcc)) continue;
    auto real = search.sysroot.canonical(nvcc).value_or(nvcc);
    if (!search.sysroot.exists(parent_of(real) + "/nvcc.profile")) {
      if (auto bin = nvcc_real_bin_dir(search.runner, search.sysroot, nvcc)) real = *bin + "/nvcc";
    }
    found.push_back({prefix_of_nvcc(real), ToolkitOrigin::path_nvcc});
    break;  // only the nvcc a shell would run
  }
  return found;
}

std::vector<Candidate> system_candidates(const ToolkitSearch& search) {
  std::vector<Candidate> found;
  for (auto& prefix : versioned_prefixes(search.sysroot))
    found.push_back({std::move(prefix), ToolkitOrigin::versioned_dir});
  found.push_back({default_link_prefix, ToolkitOrigin::default_link});
  found.push_back({opt_cuda_prefix, ToolkitOrigin::opt_cuda});
  if (auto home = search.env.get_nonempty("CUDA_HOME")) {
    found.push_back({*home, ToolkitOrigin::cuda_home});
  }
  for (auto& candidate : path_nvcc_candidates(search)) found.push_back(std::move(candidate));
  if (search.sysroot.is_executable_file(std::string(distro_nvcc_dir) + "/nvcc"))
    found.push_back({"/usr", ToolkitOrigin::distro_package});
  return found;
}

void add_or_merge(std::vector<ToolkitFacts>& toolkits, ToolkitFacts facts) {
  for (auto& existing : toolkits) {
    if (existing.path != facts.path) continue;
    for (size_t i = 0; i < facts.origins.size(); ++i) {
      existing.origins.push_back(facts.origins[i]);
      existing.found_at.push_back(facts.found_at[i]);
    }
    return;
  }
  toolkits.push_back(std::move(facts));
}

// NVIDIA's apt repository installs /usr/local/cuda-13.0 from cuda-toolkit-13-0 (or the smaller
// meta packages), whose version is the release: "13.0.2-1".
std::optional<ToolkitVersion> dpkg_version(const std::string& prefix,
                                           const DpkgPackages& packages) {
  static const std::regex versioned(R"(/usr/local/cuda-([0-9]+)\.([0-9]+))");
  std::smatch match;
  if (packages.empty() || !std::regex_match(prefix, match, versioned)) return std::nullopt;
  const auto suffix = match[1].str() + "-" + match[2].str();
  const auto package_version = [&](const std::string& name) -> std::optional<Version> {
    const auto it = packages.find(name + "-" + suffix);
    if (it == packages.end()) return std::nullopt;
    return Version::parse(it->second.substr(0, it->second.find('-')));  // drop the Debian revision
  };
  for (const char* meta :
       {"cuda-toolkit", "cuda-compiler", "cuda-minimal-build", "cuda-libraries"}) {
    if (auto release = package_version(meta)) {
      return ToolkitVersion{release, package_version("cuda-nvcc"), package_version("cuda-cudart"),
                            "dpkg", false};
    }
  }
  return std::nullopt;
}

// Debian's "11.8.89~11.8.0-5~deb12u1" is nvcc's version, then the release, then the packaging
// revision; Ubuntu's "11.5.1-1ubuntu1" is the release alone.
std::optional<ToolkitVersion> distro_package_version(const std::string& prefix,
                                                     const DpkgPackages& packages) {
  const auto it = packages.find("nvidia-cuda-toolkit");
  if (prefix != "/usr" || it == packages.end()) return std::nullopt;
  const auto& full = it->second;
  const auto tilde = full.find('~');
  const auto release_text = tilde == std::string::npos ? full : full.substr(tilde + 1);
  const auto release = Version::parse(release_text.substr(0, release_text.find_first_of("-~+")));
  const auto nvcc =
      tilde == std::string::npos ? std::nullopt : Version::parse(full.substr(0, tilde));
  if (!release) return std::nullopt;
  return ToolkitVersion{release, nvcc, std::nullopt, "dpkg", false};
}

// Stands in for the runner where a program must not run: every start fails.
class RefusingRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const Command& command) override {
    return make_error(ErrorKind::failure,
                      (command.argv.empty() ? std::string("a program") : command.argv.front()) +
                          " is not run: others can change it");
  }
};

std::optional<ToolkitFacts> inspect(const Sysroot& sysroot, ProcessRunner& runner,
                                    const Candidate& candidate, const DpkgPackages& packages) {
  const auto real = sysroot.canonical(candidate.path);
  if (!real || !sysroot.is_directory(*real)) return std::nullopt;
  auto version = read_toolkit_version(sysroot, runner, *real, packages);
  if (!version) return std::nullopt;
  ToolkitFacts facts;
  facts.path = *real;
  facts.version = version->release ? version->release : version->nvcc;
  facts.nvcc_version = version->nvcc;
  facts.cudart_version = version->cudart;
  facts.release_known = version->release.has_value();
  facts.version_source = version->source;
  facts.from_wheels = version->from_wheels;
  facts.origins.push_back(candidate.origin);
  facts.found_at.push_back(candidate.path);
  return facts;
}

}  // namespace

std::optional<Version> parse_nvcc_version_output(std::string_view output) {
  static const std::regex release(R"(release [0-9.]+, V([0-9][0-9.]*))");
  const std::string text(output);
  std::smatch match;
  if (!std::regex_search(text, match, release)) return std::nullopt;
  return Version::parse(match[1].str());
}

ToolkitVersion parse_version_json(std::string_view json) {
  ToolkitVersion version;
  const auto document = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return version;
  const auto read = [&](const char* component) -> std::optional<Version> {
    const auto it = document.find(component);
    if (it == document.end() || !it->is_object()) return std::nullopt;
    const auto field = it->find("version");
    if (field == it->end() || !field->is_string()) return std::nullopt;
    return Version::parse(field->get<std::string>());
  };
  version.release = read("cuda");
  version.nvcc = read("cuda_nvcc");
  version.cudart = read("cuda_cudart");
  version.source = "version.json";
  return version;
}

std::optional<Version> parse_version_txt(std::string_view text) {
  constexpr std::string_view prefix = "CUDA Version ";
  const auto trimmed = text::trim(text);
  if (!text::starts_with(trimmed, prefix)) return std::nullopt;
  return Version::parse(trimmed.substr(prefix.size()));
}

DpkgPackages parse_dpkg_status(std::string_view status) {
  DpkgPackages packages;
  std::string name, version;
  bool installed = false;
  const auto flush = [&] {
    if (installed && !name.empty() && !version.empty()) packages[name] = version;
    name.clear();
    version.clear();
    installed = false;
  };
  for (const auto& line : text::lines(status)) {
    if (line.empty())
      flush();
    else if (text::starts_with(line, "Package: "))
      name = line.substr(9);
    else if (text::starts_with(line, "Version: "))
      version = line.substr(9);
    else if (text::starts_with(line, "Status: "))
      installed = text::contains(line, " installed");
  }
  flush();
  return packages;
}

std::vector<std::string> versioned_prefixes(const Sysroot& sysroot) {
  std::vector<std::string> prefixes;
  for (const auto& name : sysroot.list_directory("/usr/local")) {
    if (text::starts_with(name, "cuda-")) prefixes.push_back("/usr/local/" + name);
  }
  return prefixes;
}

std::optional<ToolkitVersion> read_toolkit_version(const Sysroot& sysroot, ProcessRunner& runner,
                                                   const std::string& prefix,
                                                   const DpkgPackages& packages) {
  if (auto json = sysroot.read_file(prefix + "/version.json")) {
    auto version = parse_version_json(*json);
    if (version.release) return version;
  }
  if (auto txt = sysroot.read_file(prefix + "/version.txt")) {
    if (auto release = parse_version_txt(*txt))
      return ToolkitVersion{release, std::nullopt, std::nullopt, "version.txt", false};
  }
  const auto nvcc = prefix + "/bin/nvcc";
  if (!sysroot.is_executable_file(nvcc)) return std::nullopt;
  if (auto packaged = dpkg_version(prefix, packages)) return packaged;
  if (auto packaged = distro_package_version(prefix, packages)) return packaged;
  if (auto wheel = wheel_version(sysroot, prefix, "cuda_nvcc")) {
    return ToolkitVersion{std::nullopt, wheel, cudart_version(sysroot, prefix), "dist-info", true};
  }
  if (auto reported = run_nvcc_version(runner, sysroot, nvcc)) {
    return ToolkitVersion{std::nullopt, reported, cudart_version(sysroot, prefix), "nvcc --version",
                          false};
  }
  return std::nullopt;
}

std::optional<DefaultLinkFacts> probe_default_link(const Sysroot& sysroot) {
  const std::string path = "/usr/local/cuda";
  if (!sysroot.is_symlink(path) && !sysroot.is_directory(path)) return std::nullopt;
  const auto chain = sysroot.resolve(path);
  return DefaultLinkFacts{path, chain.hops, chain.target, !chain.exists};
}

std::vector<ToolkitFacts> probe_toolkits(const ToolkitSearch& search) {
  std::vector<ToolkitFacts> toolkits;
  const auto packages =
      parse_dpkg_status(search.sysroot.read_file("/var/lib/dpkg/status").value_or(""));
  for (const auto& candidate : system_candidates(search)) {
    if (auto facts = inspect(search.sysroot, search.runner, candidate, packages)) {
      add_or_merge(toolkits, std::move(*facts));
    }
  }
  // cudaenv's own store lives on the host, whatever the sysroot.
  const Sysroot host;
  std::vector<std::filesystem::path> roots{search.data_root};
  roots.insert(roots.end(), search.shared_roots.begin(), search.shared_roots.end());
  for (const auto& root : roots) {
    const auto store = (root / "toolkits").string();
    // A store others can write is never probed: its nvcc would run as us.
    const bool trusted = ownership::check_data_root(root).ok();
    for (const auto& name : trusted ? host.list_directory(store) : std::vector<std::string>{}) {
      if (text::starts_with(name, ".")) continue;  // staging and lock files
      // A toolkit whose programs others can change is still reported from its files, but its
      // nvcc is never asked: activation and verify refuse it with the reason.
      const auto prefix = store + "/" + name;
      const bool runnable =
          ownership::check_prefix(prefix, ownership::toolkit_layout(), "toolkit").ok();
      RefusingRunner refusing;
      ProcessRunner& runner = runnable ? search.runner : refusing;
      if (auto facts = inspect(host, runner, {prefix, ToolkitOrigin::cudaenv}, {})) {
        add_or_merge(toolkits, std::move(*facts));
      }
    }
  }
  std::stable_sort(toolkits.begin(), toolkits.end(), [](const auto& a, const auto& b) {
    return a.version && (!b.version || *a.version > *b.version);
  });
  return toolkits;
}

}  // namespace cudaenv::probe
