#pragma once
// The NVIDIA driver and the GPUs it drives, read through NVML and the CUDA driver API (both
// dlopen'ed through the loader seam), falling back to the kernel module's files in /proc and /sys.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sysroot.hpp"
#include "probe/facts.hpp"
#include "probe/kernel_module.hpp"
#include "probe/library_loader.hpp"

namespace cudaenv::probe {

struct DriverReading {
  std::optional<DriverFacts> driver;  // nullopt: no NVIDIA driver on this machine
  std::vector<GpuFacts> gpus;
  std::vector<std::string> notes;      // why something could not be read
  std::vector<std::string> libraries;  // driver library files that were found and opened
};

// "libcuda.so.535.104.05" -> "535.104.05": the driver packages name their libraries this way.
std::optional<std::string> driver_version_from_library_name(std::string_view file_name);

DriverReading probe_driver(const Sysroot& sysroot, LibraryLoader& loader);

}  // namespace cudaenv::probe
