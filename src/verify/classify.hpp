#pragma once
// Naming what broke. From the compiler's and the program's real output, and the machine's facts,
// one cause with a stable identifier, what happened in a sentence, and a concrete fix.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "forward/compat_library.hpp"
#include "manifest/database.hpp"
#include "probe/facts.hpp"
#include "verify/build.hpp"
#include "verify/program_output.hpp"

namespace cudaenv::verify {

// The identifiers are part of the JSON contract (docs/verify.md lists them with their fixes).
enum class CauseId {
  no_driver,                  // no driver, or this process cannot reach it or any GPU
  driver_too_old,             // the driver is older than the CUDA runtime needs
  no_kernel_image,            // no machine code or PTX for the GPU's architecture
  host_compiler_unsupported,  // nvcc refuses the host gcc/clang
  glibc_headers_clash,        // the toolkit's math headers and glibc's <math.h> disagree
  cudart_mismatch,            // libcudart missing, or another toolkit's was loaded
  out_of_memory,
  wrong_result,      // the kernel ran and computed wrong values: hardware or driver fault
  compile_failed,    // nvcc failed for any other reason
  runtime_error,     // a CUDA error no rule above names
  cudnn_unloadable,  // --cudnn: the library could not be loaded
  cudnn_mismatch,    // --cudnn: cudnnGetVersion() differs from the version recorded beside it
  framework_not_installed,  // --torch/--tensorflow/--jax: not importable in the active Python
  framework_cpu_only,       // the framework was built without CUDA
  // A forward-compatibility library was loaded where it cannot run: 803 (a kernel module newer
  // than it, or of a branch it does not accept) or 804 (not a data-center GPU).
  forward_compat_failed,
};

const char* to_string(CauseId id);

struct Cause {
  CauseId id;
  std::string message;  // what happened, naming the failed call, file or version
  std::string fix;      // what to do: a command, a flag, a version
};

// What the classifier knows besides the outputs.
struct ClassifyContext {
  const manifest::Database& db;
  std::optional<probe::DriverFacts> driver;
  std::vector<probe::GpuFacts> gpus;  // as probe saw them (NVML), before the program ran
  std::vector<probe::CompilerFacts> compilers;
  Version toolkit;           // the toolkit's version: release, or nvcc's
  std::string toolkit_path;  // its prefix, as shown to the user
  ArchPlan archs;            // what the program was built for
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> cudnn_library;  // --cudnn: the library loaded
  std::optional<long long> cudnn_expected;   // its version as recorded beside it
  // The forward-compatibility library first on the program's LD_LIBRARY_PATH, if any.
  std::optional<forward::CompatLibrary> forward_compat;
};

struct Evidence {
  std::optional<ProcessResult> compile;  // nullopt: the build cache answered
  std::optional<ProcessResult> run;      // nullopt: not run (the build failed)
  ProgramReport program;                 // parsed from run->out
};

// The first thing that broke, or nullopt when the program built, ran, and every GPU's kernel
// result matched the CPU's.
std::optional<Cause> classify(const Evidence& evidence, const ClassifyContext& context);

// The cause an error text names, from any layer: a framework's exception, nvcc's or the
// loader's output. nullopt when no rule matches.
std::optional<CauseId> cause_named_in(std::string_view text);

// The full cause for such a text (used for the frameworks' errors), with the fix for `gpu`.
Cause cause_from_text(CauseId id, const std::string& text, const ClassifyContext& context,
                      const std::optional<Version>& gpu);

// The database's release for a toolkit version: the same version, else the oldest release whose
// nvcc has that version (toolkits from pip wheels know only nvcc's), else the newest release of
// the same major.minor. nullptr when the database does not know the series.
const manifest::CudaRelease* release_for(const manifest::Database& db, const Version& toolkit);

}  // namespace cudaenv::verify
