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

  install::ReleaseSource source() const { return {mirror, store, settings.fetch}; }
};

Result<DownloadSetup> download_setup(const DownloadFlags& flags, const Context& context);

}  // namespace cudaenv::cli
