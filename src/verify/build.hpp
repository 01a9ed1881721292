#pragma once
// Building the device-query program with the toolkit under test, once per (toolkit, architectures,
// program): later runs find it in the build cache and only run it.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/process.hpp"
#include "core/version.hpp"
#include "manifest/database.hpp"

namespace cudaenv::verify {

// Diagnostic overrides of what the program is built for (`--only-arch`, `--no-ptx`): they make
// deliberately wrong builds, to show what verify says about them.
struct ArchRequest {
  std::vector<Version> only;  // build machine code for exactly these compute capabilities
  bool no_ptx = false;        // leave out the PTX the driver could compile for newer GPUs
};

struct ArchPlan {
  std::vector<Version> sass;   // machine code for each of these, ascending, without duplicates
  std::optional<Version> ptx;  // PTX for the highest, so GPUs newer than all of them still run
  std::string source;          // "gpus", "only-arch" or "default" (no GPU visible)
  // GPUs the toolkit has no target for, compiled for an older member of their family whose
  // code runs on them (NVIDIA's binary compatibility): {GPU, target}, as {10.3, 10.0}.
  std::vector<std::pair<Version, Version>> through_family = {};
};

// Whether a toolkit release can compile for `arch` (the database's first/last toolkit per arch).
bool toolkit_targets(const manifest::GpuArch& arch, const Version& toolkit);

// The GPUs' architectures; with none visible, the oldest one the toolkit targets, so the compile
// step is still proven. Overridden by `request.only`.
ArchPlan plan_architectures(const manifest::Database& db, const Version& toolkit,
                            const std::vector<Version>& gpus, const ArchRequest& request);

// "-gencode", "arch=compute_90,code=sm_90", ... and the PTX entry last.
std::vector<std::string> gencode_arguments(const ArchPlan& plan);
// "sm_80 sm_90 + PTX compute_90".
std::string describe(const ArchPlan& plan);

struct BuildSpec {
  std::string toolkit_path;     // the prefix as this process reaches it
  std::string toolkit_version;  // "13.0.88"
  ArchPlan archs;
  std::string program;                             // device_query.cu's text
  std::map<std::string, std::string> environment;  // the toolkit's environment
};

// "<version>-<targets>-<hash>": the hash covers the toolkit's path and version, the targets, the
// program's text, nvcc's flags and the NVCC_* variables that change what nvcc does.
std::string cache_key(const BuildSpec& spec);

struct BuildResult {
  bool cached = false;
  std::filesystem::path binary;          // <cache>/<key>/device_query
  std::vector<std::string> command;      // nvcc's command line as run
  std::optional<ProcessResult> compile;  // nullopt when the cache answered
  double seconds = 0;                    // compile time
  bool ok() const { return cached || (compile && compile->succeeded()); }
};

// The program in cache_root/<key>/, built there first when missing. nvcc writes to a temporary
// name that is renamed into place, so an interrupted build never leaves a program a later run
// would trust. An Error only when the cache cannot be written; a failed compile (also an nvcc
// that cannot be started) is a BuildResult for the classifier.
Result<BuildResult> build_program(const BuildSpec& spec, const std::filesystem::path& cache_root,
                                  ProcessRunner& runner);

}  // namespace cudaenv::verify
