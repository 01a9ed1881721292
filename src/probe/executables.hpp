#pragma once
// Finding and running the machine's own tools (nvcc, nvidia-smi, dkms, python3) below a sysroot.

#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/sysroot.hpp"

namespace cudaenv::probe {

// The host path of the file a machine path's links lead to inside the root: running the path
// itself would let the kernel follow an absolute link (/usr/bin/nvidia-smi -> /etc/alternatives/…)
// out of the sysroot to the host's copy.
std::string runnable(const Sysroot& sysroot, const std::string& machine_path);

// The first executable `name` in the environment's PATH directories, then in `fallbacks`
// (system directories a login shell would have, for tools such as dkms in /usr/sbin), as a machine
// path. nullopt when there is none.
std::optional<std::string> find_tool(const Sysroot& sysroot, const Environment& env,
                                     const std::string& name,
                                     const std::vector<std::string>& fallbacks = {});

}  // namespace cudaenv::probe
