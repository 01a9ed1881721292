#pragma once
// `cudaenv mirror create`: copy a release's manifest and archives from an upstream mirror into a
// directory laid out as NVIDIA's, so any static web server (or file://) can serve it to an
// air-gapped cluster.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "install/components.hpp"
#include "install/installer.hpp"

namespace cudaenv::install {

struct MirrorRelease {
  std::string product;  // "cuda" or "cudnn"
  Version version;
  std::vector<SelectedArchive> archives;
  std::string manifest_json;  // as the upstream served it
};

// Writes <dir>/<product>/redist/redistrib_<v>.json (listing only the mirrored components) and
// every archive at its relative path, each checked against its sha256 (a mismatch removes the
// file). Downloads run in parallel and resume.
Status create_mirror_release(const fs::path& dir, const std::string& upstream,
                             const MirrorRelease& release, const InstallSettings& settings,
                             InstallObserver& observer);

}  // namespace cudaenv::install
