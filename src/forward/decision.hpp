#pragma once
// Whether a forward-compatibility library may go first on LD_LIBRARY_PATH: NVIDIA's rule, as the
// library's own note states it. Only when the loaded kernel module is older than the library, of
// a branch the note lists, and every GPU the module drives is one forward compatibility runs on.
// Otherwise the CUDA driver API fails: a module newer than the library, or of a branch it does not
// accept, gives error 803 (cudaErrorSystemDriverMismatch); a GPU outside NVIDIA's data-center
// products gives 804 (cudaErrorCompatNotSupportedOnDevice).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "forward/compat_library.hpp"

namespace cudaenv::forward {

enum class Verdict {
  use,                   // put it first
  no_module,             // no NVIDIA kernel module is loaded: nothing to run on
  module_not_older,      // the module is as new or newer: the system's libcuda serves (803 if put
                         // first)
  branch_not_supported,  // the note does not list the module's branch (803 if put first)
  gpu_not_supported,     // a GPU that is not a data-center one (804 if put first)
  unreadable,            // no readable note: never guessed
};

struct Decision {
  Verdict verdict = Verdict::unreadable;
  std::string reason;  // one sentence for messages, starting lower case
  bool use() const { return verdict == Verdict::use; }
};

// `gpu_supported` says whether forward compatibility runs on one GPU model (as the kernel names it:
// "NVIDIA H200"); `gpus` are the models the module drives.
Decision decide(const CompatLibrary& library, const std::optional<std::string>& module_version,
                const std::vector<std::string>& gpus,
                const std::function<bool(const std::string&)>& gpu_supported);

// "803 (system has unsupported display driver / cuda driver combination)": the CUDA errors a
// misplaced forward-compatibility library causes, as the runtime names them.
std::string error_803();
std::string error_804();

}  // namespace cudaenv::forward
