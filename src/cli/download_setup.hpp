#pragma once
// What every command that talks to a mirror shares: the flags, and the mirror chosen from
// --mirror / CUDAENV_MIRROR / config / NVIDIA's with the download settings.

#include <string>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "install/installer.hpp"
#include "install/plan.hpp"
#include "project/config.hpp"

namespace cudaenv::cli {

struct DownloadFlags {
  std::string mirror;
  int jobs = 0;
  std::string ca_bundle;
  int stall_timeout = 0;
};

void add_download_flags(CLI::App& command, DownloadFlags& flags);

struct DownloadSetup {
  std::string mirror;
  install::Store store;
  install::InstallSettings settings;
  project::Config config;

  // Where `mirror` was set: "set by --mirror", "set by CUDAENV_MIRROR", "set by mirror in
  // <config>", or "NVIDIA's, the default".
  std::string mirror_origin;

  install::ReleaseSource source() const { return {mirror, store, settings.fetch}; }
  // A network error with where the mirror it failed on was chosen, so the user knows what to
  // change; other errors as they are.
  Error explain(const Error& error) const;
};

Result<DownloadSetup> download_setup(const DownloadFlags& flags, const Context& context);

}  // namespace cudaenv::cli
