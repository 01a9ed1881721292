#pragma once
// Windows Subsystem for Linux 2: the GPU belongs to the Windows NVIDIA driver, which WSL maps into
// every distribution at /usr/lib/wsl/lib (libcuda, libnvidia-ml, nvidia-smi) and reaches through
// /dev/dxg. No Linux kernel module runs, and a Linux driver installed inside breaks CUDA there.

#include <string_view>

#include "core/sysroot.hpp"
#include "probe/facts.hpp"

namespace cudaenv::probe {

// Where WSL mounts the Windows driver's Linux libraries and nvidia-smi.
inline constexpr const char* wsl_driver_directory = "/usr/lib/wsl/lib";

// Reads the kernel release (/proc/sys/kernel/osrelease, else /proc/version) and /usr/lib/wsl.
WslFacts probe_wsl(const Sysroot& sysroot);

// Whether a kernel release or /proc/version line names Microsoft's WSL2 kernel.
bool is_wsl2_kernel(std::string_view release);

}  // namespace cudaenv::probe
