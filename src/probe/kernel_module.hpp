#pragma once
// The NVIDIA kernel module's own version, read from /proc and /sys without loading a driver
// library: what the prompt hook and the shim can afford, and the driver probe's fallback.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sysroot.hpp"

namespace cudaenv::probe {

// The version in /proc/driver/nvidia/version's "NVRM version:" line, for the proprietary
// ("Kernel Module  535.104.05  ...") and the open ("Open Kernel Module for x86_64  575.57.08")
// forms. nullopt when the text holds no such line.
std::optional<std::string> parse_proc_driver_version(std::string_view text);

// /proc/driver/nvidia/version's text, read bounded and non-blocking (a FIFO in its place under a
// sysroot cannot block); nullopt when it is absent, not a regular file or over 4 KiB.
std::optional<std::string> read_proc_driver_version(const Sysroot& sysroot);

// The loaded kernel module's version (/proc/driver/nvidia/version, else
// /sys/module/nvidia/version), read without loading a driver library: cheap enough for the
// prompt hook (bounded reads, no C++ streams). nullopt when no NVIDIA module is loaded.
std::optional<std::string> kernel_module_driver_version(const Sysroot& sysroot);

// The "Model:" line of /proc/driver/nvidia/gpus/*/information ("NVIDIA H200"), one per GPU the
// module drives, in bus order: the GPUs' names without loading a driver library. Empty when no
// module is loaded. Each file is read bounded and non-blocking; at most 64 GPUs.
std::vector<std::string> kernel_gpu_models(const Sysroot& sysroot);
// The model in one such file's text; "" when it has no "Model:" line.
std::string parse_gpu_information_model(std::string_view text);

}  // namespace cudaenv::probe
