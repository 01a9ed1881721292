#pragma once
// `cudaenv verify`: prove a toolkit builds and runs real GPU code on this machine, and name the
// link that broke when it does not. Select the toolkit, build the device-query program with it
// (or find it in the build cache), run it in the toolkit's environment, classify the outcome;
// optionally load cuDNN and check the Python frameworks.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "install/store.hpp"
#include "manifest/database.hpp"
#include "probe/facts.hpp"
#include "verify/build.hpp"
#include "verify/classify.hpp"
#include "verify/cudnn.hpp"
#include "verify/frameworks.hpp"
#include "verify/program_output.hpp"
#include "verify/selection.hpp"

namespace cudaenv::verify {

struct VerifyRequest {
  SelectionRequest selection;
  ArchRequest archs;
  std::optional<std::string> cudnn;     // --cudnn PATH or SPEC (a cuDNN cudaenv installed)
  std::vector<std::string> frameworks;  // "torch", "tensorflow", "jax"
  // --build-only: build the device query and stop, the check a machine without a GPU can make
  // (a container build); the run, and cuDNN's load, are left to a machine with one.
  bool build_only = false;
};

struct VerifyInputs {
  const probe::MachineFacts& facts;
  const manifest::Database& db;
  const Environment& env;
  const Sysroot& sysroot;
  ProcessRunner& runner;
  std::filesystem::path cache_root;  // <data root>/cache/verify
  // Where `--cudnn SPEC` looks: the data root, then the system stores behind it (the root wins on
  // equal versions), as for toolkits.
  install::Store store;
};

struct Verification {
  SelectedToolkit toolkit;
  ArchPlan archs;
  BuildResult build;
  std::optional<ProcessResult> run;  // nullopt when the build failed or was all (--build-only)
  bool build_only = false;
  ProgramReport program;
  std::optional<CudnnSelection> cudnn;
  std::vector<FrameworkReport> frameworks;
  std::optional<Cause> cause;  // the first failure: the toolkit's, else a framework's
  bool ok() const { return !cause; }
};

// A failed check is a Verification with a cause. Errors: an unknown or uninstalled SPEC
// (not_found), a --cudnn path without cuDNN (not_found), a cache that cannot be written.
Result<Verification> verify_toolkit(const VerifyRequest& request, const VerifyInputs& inputs);

// <data root>/cache/verify: compiled programs are a cache (removable at any time), next to the
// download cache.
std::filesystem::path cache_root(const std::filesystem::path& data_root);

}  // namespace cudaenv::verify
