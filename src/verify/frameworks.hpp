#pragma once
// `--torch`, `--tensorflow`, `--jax`: does the framework in the active Python see the GPU, was it
// built for its architecture (the "no kernel image is available" trap), and does one operation
// on the GPU give the right answer. Runs frameworks.py in the toolkit's environment.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "verify/classify.hpp"

namespace cudaenv::verify {

// How a build's architecture list serves a GPU.
enum class Coverage {
  native,   // machine code for the GPU's major version at or below its minor
  ptx_jit,  // only PTX at or below its compute capability: the driver compiles it at start-up
  jit,      // the framework compiles for the GPU it finds (XLA)
  none,
  unknown,  // no list reported
};
const char* to_string(Coverage coverage);

// "sm_80,sm_90,compute_90" against 9.0. Arch-specific targets (sm_90a) serve only their own GPU.
Coverage coverage_for(const std::vector<std::string>& archs, const Version& compute_capability);

struct FrameworkReport {
  std::string name;  // "torch", "tensorflow", "jax"
  bool installed = false;
  bool check_failed = false;  // it imported, then raised while being asked about CUDA
  std::string version;
  std::optional<std::string> cuda;  // the CUDA it was built with; nullopt: a CPU-only build
  int gpus = 0;                     // GPUs it sees
  std::vector<std::string> archs;   // compiled architectures; {"jit"} for XLA
  std::vector<std::pair<Version, Coverage>> coverage;  // per GPU present
  std::optional<bool> op_ok;                           // nullopt: not run (no GPU seen)
  std::string message;  // the import error, or the operation's exception
  std::string stderr_tail;
  std::optional<Cause> cause;  // why this framework fails; nullopt: it works
  // torch only: its own libraries read from the files, one line per GPU
  // ("sm_90: 12 native, 0 jit, 0 none"), naming those with nothing the GPU can run.
  std::vector<std::string> library_scan;
  std::optional<std::string> cudnn = {};  // the cuDNN it loads ("9.1.0"); nullopt: none reported
  std::string python = {};                // the Python it ran in: "3.12"
};

// python3 on the toolkit environment's PATH ("" when there is none).
std::string find_python(const std::map<std::string, std::string>& environment);

// Reads frameworks.py's output.
FrameworkReport parse_framework_output(const std::string& name, std::string_view output);

// Runs the check for one framework and classifies the outcome against the GPUs present.
FrameworkReport check_framework(const std::string& name, const std::string& script,
                                const std::map<std::string, std::string>& environment,
                                ProcessRunner& runner, const std::vector<Version>& gpus,
                                const ClassifyContext& context);

}  // namespace cudaenv::verify
