#pragma once
// Which toolkit `cudaenv verify` proves: the one named, else the one that applies here, else the
// system's (the nvcc on PATH, $CUDA_HOME, /usr/local/cuda, in that order).

#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/sysroot.hpp"
#include "core/version.hpp"
#include "manifest/database.hpp"
#include "probe/facts.hpp"

namespace cudaenv::verify {

// A version that applies without being named on the command line, and what set it.
struct ActiveVersion {
  VersionSpec spec;
  std::string origin;  // "CUDAENV_VERSION", or the .cudaenv / config file that set it
};

// The version that applies in the current directory, in docs/design.md §3's order: CUDAENV_VERSION,
// the nearest .cudaenv upward, the global config. nullopt when none sets one (or says "system");
// an error naming the variable or file when its value is not a version spec.
Result<std::optional<ActiveVersion>> active_version(const Environment& env);

struct SelectionRequest {
  std::optional<VersionSpec> spec;      // verify's SPEC argument
  std::optional<ActiveVersion> active;  // consulted when there is no SPEC
  // Names "not installed" hints by release ("13.0.2" for "13.0.88"); nullptr: as written.
  const manifest::Database* db = nullptr;
};

struct SelectedToolkit {
  probe::ToolkitFacts facts;
  std::string host_path;  // the prefix as this process reaches it (below the sysroot)
  // How it was chosen: "spec", "CUDAENV_VERSION", "PATH", "CUDA_HOME" or "default-link" (the
  // last three are probe's origin names), and the same in words for people.
  std::string selected_by;
  std::string reason;  // "SPEC 13.0", "CUDAENV_VERSION=12.4", "the nvcc on PATH", ...
};

// A spec picks the highest matching toolkit in cudaenv's store, else the highest matching one
// found on the machine, by release or by nvcc version (project::spec_names_toolkit); without one,
// the system's. Not found: ErrorKind::not_found, with a hint naming `cudaenv install`. `toolkits`
// is probe's list, newest first.
Result<SelectedToolkit> select_toolkit(const SelectionRequest& request,
                                       const std::vector<probe::ToolkitFacts>& toolkits,
                                       const Sysroot& sysroot);

}  // namespace cudaenv::verify
