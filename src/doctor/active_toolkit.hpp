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

// DESIGN.md §3's order, first match wins, over the toolkits probe found:
//   1. $CUDAENV_VERSION, matched against the toolkits cudaenv installed ("system" skips it);
//   2. the project's choice: the nearest .cudaenv and the global config, which the project module
//      contributes; it slots in here, between the variable and the system's own toolkits;
//   3. the system's toolkit as a shell sees it: nvcc on PATH, then $CUDA_HOME, then
//   /usr/local/cuda.
ActiveToolkit select_active_toolkit(const probe::MachineFacts& facts);

}  // namespace cudaenv::doctor
