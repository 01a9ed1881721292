#pragma once
// Everything doctor and bootstrap need beyond `cudaenv info`'s facts, read through the same seams.

#include "probe/facts.hpp"
#include "probe/host_facts.hpp"
#include "probe/machine.hpp"

namespace cudaenv::probe {

// Reads HostFacts but `nvidia_smi` and `python`: those two run programs that take up to seconds
// and need nothing of `machine`, so the caller asks them beside the other probes
// (probe_nvidia_smi, probe_python_frameworks). `machine` decides what is worth asking: the kernel
// log only when the nvidia module is not loaded, the module file for the running kernel.
HostFacts probe_host(const ProbeContext& context, const MachineFacts& machine);

}  // namespace cudaenv::probe
