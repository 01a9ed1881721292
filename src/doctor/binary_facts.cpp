#include "doctor/binary_facts.hpp"

#include <algorithm>
#include <filesystem>

#include "core/text.hpp"
#include "scan/fixes.hpp"
#include "scan/ld_cache.hpp"

namespace cudaenv::doctor {

namespace fs = std::filesystem;

namespace {

// Directories a process of this Python can load cuDNN from: the NVIDIA wheels, LD_LIBRARY_PATH,
// the ld.so cache's entries for it, and the active toolkit (machine paths read in the sysroot).
std::vector<std::string> cudnn_directories(const BinaryFacts& facts, const Sysroot& sysroot,
                                           const Environment& env) {
  std::vector<std::string> directories;
  for (const auto& site : facts.site_packages)
    for (auto& directory : scan::wheel_library_directories(site)) directories.push_back(directory);
  for (const auto& entry : text::split(env.get("LD_LIBRARY_PATH").value_or(""), ':'))
    if (!entry.empty()) directories.push_back(sysroot.host_path(entry).string());
  std::string problem;
  for (const auto& entry :
       scan::read_ld_cache_file(sysroot.host_path("/etc/ld.so.cache").string(), problem))
    if (entry.soname == "libcudnn.so.9")
      directories.push_back(
          sysroot.host_path(fs::path(entry.path).parent_path().string()).string());
  if (const auto home = env.get_nonempty("CUDA_HOME"))
    directories.push_back(sysroot.host_path(*home + "/lib64").string());
  return directories;
}

// A fixture machine's python3 cannot answer sysconfig's question: its site-packages are read
// from its files instead — <prefix>/lib/python3.*/{site,dist}-packages of the prefix it lives
// in (a venv's, or /usr's and /usr/local's for the system one).
std::vector<std::string> site_packages_in_files(const Sysroot& sysroot, const std::string& python) {
  std::vector<fs::path> prefixes{fs::path(python).parent_path().parent_path()};
  if (prefixes.front() == "/usr") prefixes.emplace_back("/usr/local");
  std::vector<std::string> sites;
  for (const auto& prefix : prefixes) {
    std::error_code error;
    const auto lib = sysroot.host_path((prefix / "lib").string());
    for (fs::directory_iterator it(lib, error), end; !error && it != end; it.increment(error)) {
      if (!text::starts_with(it->path().filename().string(), "python3")) continue;
      for (const char* name : {"site-packages", "dist-packages"})
        if (fs::is_directory(it->path() / name, error))
          sites.push_back((it->path() / name).string());
    }
  }
  std::sort(sites.begin(), sites.end());
  return sites;
}

// The sites the interpreter named in its one answer (probe/python_frameworks.hpp); under a
// sysroot, the prefix's files.
Result<std::vector<std::string>> site_packages_of(const Sysroot& sysroot,
                                                  const probe::PythonFrameworkFacts& python) {
  if (sysroot.is_host_root()) {
    if (python.sites_reported) return python.site_packages;
    return make_error(ErrorKind::failure, python.error.empty()
                                              ? python.python + " did not report its site-packages"
                                              : python.error);
  }
  auto sites = site_packages_in_files(sysroot, python.python);
  if (sites.empty())
    return make_error(ErrorKind::not_found,
                      "no site-packages beside " + python.python + " in CUDAENV_SYSROOT");
  return sites;
}

std::string arch_name(const scan::GpuCode& code) {
  return (code.kind == scan::CodeKind::sass ? "sm_" : "compute_") + std::to_string(code.arch);
}

}  // namespace

bool is_framework_package(const std::string& package) {
  for (const char* prefix :
       {"torch", "jaxlib", "jax_plugins", "jax_cuda", "cupy", "tensorflow", "triton"}) {
    if (text::starts_with(package, prefix)) return true;
  }
  return false;
}

BinaryFacts gather_binary_facts(const Sysroot& sysroot, const Environment& env,
                                const probe::PythonFrameworkFacts& python) {
  BinaryFacts facts;
  if (!python.python_found) {
    facts.not_read = "no python3 on PATH";
    return facts;
  }
  auto sites = site_packages_of(sysroot, python);
  if (!sites) {
    facts.not_read = sites.error().message;
    return facts;
  }
  facts.scanned = true;
  facts.site_packages = *sites;
  std::vector<fs::path> roots;
  std::error_code error;
  for (const auto& site : *sites) {
    for (fs::directory_iterator it(site, error), end; !error && it != end; it.increment(error)) {
      if (is_framework_package(it->path().filename().string()) && it->is_directory(error))
        roots.push_back(it->path());
    }
  }
  auto walk = scan::scan_paths(roots);
  if (walk.failure) {
    facts.scanned = false;
    facts.not_read = walk.failure->message;
    return facts;
  }
  facts.framework_binaries = std::move(walk.binaries);
  facts.scan_warnings = std::move(walk.warnings);
  for (const auto& place : walk.unreadable) facts.scan_warnings.push_back("not read: " + place);
  if (walk.unreadable_files > 0)
    facts.scan_warnings.push_back(std::to_string(walk.unreadable_files) +
                                  " libraries could not be opened");
  facts.cudnn_copies = scan::find_copies("libcudnn.so.9", cudnn_directories(facts, sysroot, env));
  auto ptxas_variable = env.get("TRITON_PTXAS_PATH");
  if (ptxas_variable && !ptxas_variable->empty())
    ptxas_variable = sysroot.host_path(*ptxas_variable).string();
  facts.triton = scan::find_triton_ptxas(*sites, ptxas_variable, [&](const std::string& path) {
    return sysroot.host_path(path).string();
  });
  return facts;
}

void read_torch_archs_from_binaries(const BinaryFacts& binaries,
                                    probe::PythonFrameworkFacts& python) {
  if (!python.torch_found || !python.torch_cuda || !python.torch_arch_list.empty()) return;
  for (const auto& binary : binaries.framework_binaries) {
    if (!text::ends_with(binary.path, "/torch/lib/libtorch_cuda.so")) continue;
    std::vector<std::string> sass;
    std::vector<std::string> ptx;
    for (const auto& code : binary.codes) {  // sorted: each kind in ascending order
      if (code.no_kernels) continue;
      auto& list = code.kind == scan::CodeKind::sass ? sass : ptx;
      if (auto name = arch_name(code); std::find(list.begin(), list.end(), name) == list.end())
        list.push_back(std::move(name));
    }
    if (sass.empty() && ptx.empty()) return;
    python.torch_arch_list = std::move(sass);
    python.torch_arch_list.insert(python.torch_arch_list.end(), ptx.begin(), ptx.end());
    python.torch_arch_source = binary.path;
    return;
  }
}

}  // namespace cudaenv::doctor
