#pragma once
// Which toolkit `cudaenv verify` proves: the one named, else the one that applies here (the
// same answer as list, doctor and the hook: here/), else the system's.

#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/sysroot.hpp"
#include "core/version.hpp"
#include "here/here.hpp"
#include "manifest/database.hpp"
#include "probe/facts.hpp"

namespace cudaenv::verify {

struct SelectionRequest {
  std::optional<VersionSpec> spec;  // verify's SPEC argument
  // What applies here (consulted when there is no SPEC): its selection, served or missing, or
  // the system's toolkit in here/'s one order. nullopt: the system's.
  std::optional<here::Here> here;
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
