#include "verify/selection.hpp"

#include <algorithm>
#include <filesystem>

#include "core/ownership.hpp"
#include "core/text.hpp"
#include "here/active_toolkit.hpp"
#include "project/selection.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::verify {

namespace {

bool reached_through(const probe::ToolkitFacts& toolkit, probe::ToolkitOrigin origin) {
  return std::find(toolkit.origins.begin(), toolkit.origins.end(), origin) != toolkit.origins.end();
}

// cudaenv's store is on the host whatever the sysroot; everything else is a machine path.
SelectedToolkit selected(const probe::ToolkitFacts& toolkit, const Sysroot& sysroot,
                         std::string selected_by, std::string reason) {
  const bool in_store = reached_through(toolkit, probe::ToolkitOrigin::cudaenv);
  return {toolkit, in_store ? toolkit.path : sysroot.host_path(toolkit.path).string(),
          std::move(selected_by), std::move(reason)};
}

std::string found_list(const std::vector<probe::ToolkitFacts>& toolkits) {
  std::vector<std::string> found;
  for (const auto& toolkit : toolkits) {
    found.push_back(resolve::toolkit_name(toolkit) + " (" + toolkit.path + ")");
  }
  return found.empty() ? "none" : text::join(found, ", ");
}

// Toolkits are newest first, so the first match is the highest.
const probe::ToolkitFacts* highest_match(const std::vector<probe::ToolkitFacts>& toolkits,
                                         const VersionSpec& spec, bool in_store) {
  for (const auto& toolkit : toolkits) {
    if (!project::spec_names_toolkit(spec, resolve::possible_releases(toolkit),
                                     toolkit.nvcc_version))
      continue;
    if (reached_through(toolkit, probe::ToolkitOrigin::cudaenv) == in_store) return &toolkit;
  }
  return nullptr;
}

Result<SelectedToolkit> by_spec(const VersionSpec& spec, const std::string& selected_by,
                                const std::string& reason,
                                const std::vector<probe::ToolkitFacts>& toolkits,
                                const Sysroot& sysroot, const manifest::Database* db) {
  for (const bool in_store : {true, false}) {
    if (const auto* toolkit = highest_match(toolkits, spec, in_store)) {
      // verify runs the store's nvcc and the program it builds: the same check as activation.
      if (in_store) {
        if (auto trusted =
                ownership::check_prefix(toolkit->path, ownership::toolkit_layout(), "toolkit");
            !trusted)
          return trusted.error();
      }
      return selected(*toolkit, sysroot, selected_by, reason);
    }
  }
  return make_error(ErrorKind::not_found,
                    "CUDA " + spec.str() + " (" + reason +
                        ") is not installed; toolkits found: " + found_list(toolkits),
                    "install it with 'cudaenv install " +
                        (db ? resolve::install_spec(*db, spec) : spec.str()) + "'");
}

// What applies here, as probe found it: the selection's toolkit, else the system's.
Result<SelectedToolkit> by_here(const here::Here& here,
                                const std::vector<probe::ToolkitFacts>& toolkits,
                                const Sysroot& sysroot) {
  if (here.missing) {
    auto missing = *here.missing;
    missing.message += "; toolkits found: " + found_list(toolkits);
    return missing;
  }
  const auto active = here::active_toolkit(here, toolkits);
  if (!active.toolkit)
    return make_error(ErrorKind::not_found,
                      "no CUDA toolkit selected: no nvcc on PATH, no CUDA_HOME, no "
                      "/usr/local/cuda; toolkits found: " +
                          found_list(toolkits),
                      "name a version ('cudaenv verify 12.4') or install one with 'cudaenv "
                      "install SPEC'");
  if (active.selected)
    return selected(*active.toolkit, sysroot, project::describe_source(here.selection),
                    active.selected_by);
  return selected(*active.toolkit, sysroot, active.origin, active.selected_by);
}

}  // namespace

Result<SelectedToolkit> select_toolkit(const SelectionRequest& request,
                                       const std::vector<probe::ToolkitFacts>& toolkits,
                                       const Sysroot& sysroot) {
  if (request.spec) {
    return by_spec(*request.spec, "spec", "SPEC " + request.spec->str(), toolkits, sysroot,
                   request.db);
  }
  return by_here(request.here.value_or(here::Here{}), toolkits, sysroot);
}

}  // namespace cudaenv::verify
