#pragma once
// Which NVIDIA-related kernel modules are loaded (/proc/modules) and which /dev/nvidia* nodes
// exist.

#include <string_view>

#include "core/sysroot.hpp"
#include "probe/facts.hpp"

namespace cudaenv::probe {

KernelModuleFacts probe_kernel_modules(const Sysroot& sysroot);

// Fills the module flags from /proc/modules' text ("nvidia_uvm 1540096 0 - Live 0x0 (POE)").
void parse_proc_modules(std::string_view text, KernelModuleFacts& facts);

}  // namespace cudaenv::probe
