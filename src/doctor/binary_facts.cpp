#include "doctor/binary_facts.hpp"

#include <filesystem>

#include "core/text.hpp"
#include "scan/fixes.hpp"
#include "scan/ld_cache.hpp"
#include "scan/python_sites.hpp"

namespace cudaenv::doctor {

namespace fs = std::filesystem;

namespace {

// Directories a process of this Python can load cuDNN from: the NVIDIA wheels, LD_LIBRARY_PATH,
// the ld.so cache's entries for it, and the active toolkit.
std::vector<std::string> cudnn_directories(const BinaryFacts& facts, const Environment& env) {
  std::vector<std::string> directories;
  for (const auto& site : facts.site_packages)
    for (auto& directory : scan::wheel_library_directories(site)) directories.push_back(directory);
  for (const auto& entry : text::split(env.get("LD_LIBRARY_PATH").value_or(""), ':'))
    if (!entry.empty()) directories.push_back(entry);
  std::string problem;
  for (const auto& entry : scan::read_ld_cache_file("/etc/ld.so.cache", problem))
    if (entry.soname == "libcudnn.so.9")
      directories.push_back(fs::path(entry.path).parent_path().string());
  if (const auto home = env.get_nonempty("CUDA_HOME")) directories.push_back(*home + "/lib64");
  return directories;
}

}  // namespace

bool is_framework_package(const std::string& package) {
  for (const char* prefix :
       {"torch", "jaxlib", "jax_plugins", "jax_cuda", "cupy", "tensorflow", "triton"}) {
    if (text::starts_with(package, prefix)) return true;
  }
  return false;
}

BinaryFacts gather_binary_facts(const Sysroot& sysroot, ProcessRunner& runner,
                                const Environment& env, const std::string& python) {
  BinaryFacts facts;
  if (!sysroot.is_host_root()) {
    facts.not_read = "not read under CUDAENV_SYSROOT";
    return facts;
  }
  if (python.empty()) {
    facts.not_read = "no python3 on PATH";
    return facts;
  }
  auto sites = scan::python_site_packages(runner, python, env.variables());
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
  facts.framework_binaries = scan::scan_paths(roots).binaries;
  facts.cudnn_copies = scan::find_copies("libcudnn.so.9", cudnn_directories(facts, env));
  facts.triton = scan::find_triton_ptxas(*sites, env.get("TRITON_PTXAS_PATH"));
  return facts;
}

}  // namespace cudaenv::doctor
