#pragma once
// What every command that talks to a mirror shares: the flags, the mirror chosen from
// --mirror / CUDAENV_MIRROR / config / NVIDIA's, the download settings, and picking a release.

#include <string>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "install/installer.hpp"
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
};

Result<DownloadSetup> download_setup(const DownloadFlags& flags, const Context& context);

// The newest release of `product` on the mirror matching `spec`. When the mirror has no directory
// index, an exact version (12.4.1) is still tried directly.
Result<Version> choose_release(const DownloadSetup& setup, const std::string& product,
                               const VersionSpec& spec);

}  // namespace cudaenv::cli
