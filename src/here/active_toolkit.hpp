#pragma once
// The toolkit the user's builds get here, among the toolkits probe found: the one list, doctor
// and verify all name. What applies here (here.hpp) decides; when nothing is selected, or the
// selection is served by nothing, the system's toolkit as a shell reaches it, in one order.

#include <optional>
#include <string>
#include <vector>

#include "here/here.hpp"
#include "probe/facts.hpp"

namespace cudaenv::here {

struct ActiveToolkit {
  // nullopt: no toolkit reaches the user's builds, or what applies here is `missing`
  std::optional<probe::ToolkitFacts> toolkit;
  // How it was chosen: the selection's source and spec ("/repo/.cudaenv=12.4",
  // "CUDAENV_VERSION=12.4"), or the system origin ("nvcc on PATH", "CUDA_HOME", ...).
  std::string selected_by;
  // The same as a machine word: "selection", or probe's origin name ("PATH", "CUDA_HOME", ...).
  std::string origin;
  bool selected = false;         // chosen by the selection (not the system fallback)
  std::optional<Error> missing;  // the selection that nothing serves (here.missing)
  // The forward-compatibility library found for the selected toolkit, used or not (here.hpp).
  std::optional<ForwardCompat> forward_compat;
  std::vector<std::string> notes;
};

// The system's toolkit, when nothing else applies: the nvcc on PATH, then $CUDA_HOME, then the
// distribution's nvidia-cuda-toolkit, then /usr/local/cuda.
struct SystemOrigin {
  probe::ToolkitOrigin origin;
  const char* label;
};
const std::vector<SystemOrigin>& system_order();

// `toolkits` is probe's list (newest first), cudaenv's own included or not; a selected toolkit
// probe did not list is described from what Here knows.
ActiveToolkit active_toolkit(const Here& here, const std::vector<probe::ToolkitFacts>& toolkits);

}  // namespace cudaenv::here
