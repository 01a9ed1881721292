#pragma once
// Which toolkit the user's builds get now: the one doctor checks the driver, the GPUs, the host
// compiler and the library path against.

#include <optional>
#include <string>
#include <vector>

#include "probe/facts.hpp"

namespace cudaenv::doctor {

struct ActiveToolkit {
  std::optional<probe::ToolkitFacts> toolkit;  // nullopt: no toolkit is active
  std::string selected_by;                     // "CUDAENV_VERSION=12.4", "nvcc on PATH", ...
  std::vector<std::string> notes;              // a selection that pointed nowhere
};

// docs/design.md §3's order, first match wins, over the toolkits probe found:
//   1./2. the selected version (project::select: $CUDAENV_VERSION, else the nearest .cudaenv, else
//      the global config), matched against the toolkits cudaenv installed; without `selected`,
//      $CUDAENV_VERSION from the facts ("system" skips it);
//   3. the system's toolkit as a shell sees it: nvcc on PATH, then $CUDA_HOME, then
//   /usr/local/cuda.
ActiveToolkit select_active_toolkit(const probe::MachineFacts& facts,
                                    const std::optional<VersionSpec>& selected = std::nullopt,
                                    const std::string& selected_by = "CUDAENV_VERSION");

}  // namespace cudaenv::doctor
