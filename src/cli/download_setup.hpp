#pragma once
// What every command that talks to a mirror shares: the flags, and the mirror chosen from
// --mirror / CUDAENV_MIRROR / config / NVIDIA's with the download settings.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "install/installer.hpp"
#include "install/plan.hpp"
#include "install/pypi_plan.hpp"
#include "project/config.hpp"

namespace cudaenv::cli {

struct DownloadFlags {
  std::string mirror;
  int jobs = 0;
  std::string ca_bundle;
  int stall_timeout = 0;
  std::string source;     // --source redist|pypi
  std::string index_url;  // --index-url URL
};

void add_download_flags(CLI::App& command, DownloadFlags& flags);
// --source and --index-url, for the commands that can fetch from a package index.
void add_source_flags(CLI::App& command, DownloadFlags& flags);

struct DownloadSetup {
  std::string mirror;
  install::Store store;
  install::InstallSettings settings;
  project::Config config;

  // Where `mirror` was set: "set by --mirror", "set by CUDAENV_MIRROR", "set by mirror in
  // <config>", or "NVIDIA's, the default".
  std::string mirror_origin;

  // "redist" (NVIDIA's archives from `mirror`) or "pypi" (wheels from `index_url`): --source,
  // else source in the config, else redist.
  std::string source_kind = "redist";
  // Whether --source or --index-url chose it (rather than the config or the default): a lock's
  // own source gives way only to these.
  bool source_flagged = false;
  // --index-url, else PIP_INDEX_URL, else index_url in the config, else PyPI's.
  std::string index_url;
  std::string index_origin;

  install::ReleaseSource source() const { return {mirror, store, settings.fetch}; }
  install::IndexSource index() const { return {index_url, store, settings.fetch}; }
  bool from_index() const { return source_kind == "pypi"; }
  // A network error with where the mirror it failed on was chosen, so the user knows what to
  // change; from an index, also what it lacks (not_found); other errors as they are.
  Error explain(const Error& error) const;
  // Where this command downloads toolkits from, for its messages: "the index URL (set by
  // --index-url)" or "the mirror URL (NVIDIA's, the default)"; as read, for text::printable.
  std::string described() const;
  // The flags a `cudaenv install` run for this command needs to download from the same place:
  // "--source pypi --index-url URL" for an index, none for redist (it finds the mirror itself).
  std::vector<std::string> install_flags() const;
};

Result<DownloadSetup> download_setup(const DownloadFlags& flags, const Context& context);

// On stderr, where a toolkit plan from an index took its component versions when the index has
// no cuda-toolkit project, and the components such a "full" plan left out for it.
void note_database_pins(const install::PypiToolkitPlan& plan, const DownloadSetup& setup,
                        Context& context);

}  // namespace cudaenv::cli
