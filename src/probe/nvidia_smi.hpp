#pragma once
// Whether nvidia-smi, NVIDIA's own NVML client, can talk to the driver: the first thing support
// asks for, and the one tool whose failure messages users search for.

#include <string_view>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/host_facts.hpp"

namespace cudaenv::probe {

NvidiaSmiFacts probe_nvidia_smi(const Sysroot& sysroot, ProcessRunner& runner,
                                const Environment& env);

// Classifies nvidia-smi's answer by its exit status and the failure texts it prints.
SmiOutcome classify_nvidia_smi(int exit_code, std::string_view output);

}  // namespace cudaenv::probe
