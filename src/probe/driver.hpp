#pragma once
// The NVIDIA driver and the GPUs it drives, read through NVML and the CUDA driver API (both
// dlopen'ed through the loader seam), falling back to the kernel module's files in /proc and /sys.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sysroot.hpp"
#include "probe/facts.hpp"
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

// The version in /proc/driver/nvidia/version's "NVRM version:" line, for the proprietary
// ("Kernel Module  535.104.05  ...") and the open ("Open Kernel Module for x86_64  575.57.08")
// forms. nullopt when the text holds no such line.
std::optional<std::string> parse_proc_driver_version(std::string_view text);

// The loaded kernel module's version (/proc/driver/nvidia/version, else
// /sys/module/nvidia/version), read without loading a driver library: cheap enough for the
// prompt hook. nullopt when no NVIDIA module is loaded.
std::optional<std::string> kernel_module_driver_version(const Sysroot& sysroot);

}  // namespace cudaenv::probe
