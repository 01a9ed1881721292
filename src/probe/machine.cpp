#include "probe/machine.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "probe/compilers.hpp"
#include "probe/cuda_env.hpp"
#include "probe/driver.hpp"
#include "probe/glibc.hpp"
#include "probe/kernel_modules.hpp"
#include "probe/os_release.hpp"
#include "probe/toolkits.hpp"
#include "probe/wsl.hpp"

namespace cudaenv::probe {

MachineFacts probe_machine(const ProbeContext& context) {
  MachineFacts facts;
  auto driver = probe_driver(context.sysroot, context.loader);
  facts.driver = std::move(driver.driver);
  facts.gpus = std::move(driver.gpus);
  facts.notes = std::move(driver.notes);
  facts.modules = probe_kernel_modules(context.sysroot);
  facts.toolkits = probe_toolkits(
      {context.sysroot, context.runner, context.env, context.data_root, context.shared_roots});
  facts.default_link = probe_default_link(context.sysroot);
  facts.compilers = probe_compilers(context.sysroot, context.runner, context.env);
  facts.os = probe_os(context.sysroot);
  facts.env = probe_cuda_env(context.sysroot, context.env);
  facts.glibc_headers = probe_glibc_headers(context.sysroot);
  facts.wsl = probe_wsl(context.sysroot);
  if (auto release = context.sysroot.read_bounded("/etc/nv_tegra_release", 4096)) {
    const auto first = text::lines(*release);
    facts.tegra_release =
        text::printable(first.empty() ? "" : std::string(text::trim(first[0])), 120);
    if (facts.tegra_release.empty()) facts.tegra_release = "/etc/nv_tegra_release";
  }
  return facts;
}

std::vector<Version> distinct_architectures(const std::vector<GpuFacts>& gpus) {
  std::vector<Version> archs;
  for (const auto& gpu : gpus) {
    if (std::find(archs.begin(), archs.end(), gpu.compute_capability) == archs.end())
      archs.push_back(gpu.compute_capability);
  }
  return archs;
}

const char* to_string(DriverSource source) {
  switch (source) {
    case DriverSource::nvml: return "nvml";
    case DriverSource::cuda_driver_api: return "cuda-driver-api";
    case DriverSource::proc_version: return "/proc/driver/nvidia/version";
    case DriverSource::sys_module: return "/sys/module/nvidia/version";
    case DriverSource::library_file: return "library-file-name";
  }
  return "unknown";
}

const char* to_string(ToolkitOrigin origin) {
  switch (origin) {
    case ToolkitOrigin::versioned_dir: return "versioned-dir";
    case ToolkitOrigin::default_link: return "default-link";
    case ToolkitOrigin::opt_cuda: return "opt-cuda";
    case ToolkitOrigin::cuda_home: return "CUDA_HOME";
    case ToolkitOrigin::path_nvcc: return "PATH";
    case ToolkitOrigin::cudaenv: return "cudaenv";
    case ToolkitOrigin::distro_package: return "distro-package";
  }
  return "unknown";
}

}  // namespace cudaenv::probe
