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
#include "install/plan.hpp"
#include "manifest/db_index.hpp"

namespace cudaenv::install {

struct MirrorRelease {
  std::string product;  // "cuda" or "cudnn"
  Version version;
  std::vector<SelectedArchive> archives;
  std::string manifest_json;  // as the upstream served it
};

// One product of `cudaenv mirror create`: --cuda SPEC [--components ...] or --cudnn SPEC.
struct MirrorRequest {
  std::string product;  // "cuda" or "cudnn"
  std::string spec;
  std::string components = "full";  // CUDA only: minimal, full or a comma-separated list
};

// Chooses the release, fetches its manifest (kept as served) and selects what to copy: the CUDA
// components asked for, or every cuDNN archive for the platform whatever its CUDA variant (the
// machines a mirror serves may run toolkits of several CUDA majors). A malformed spec is a usage
// error naming --cuda or --cudnn.
Result<MirrorRelease> plan_mirror_release(const MirrorRequest& request, const ReleaseSource& source,
                                          const std::string& platform);

// Writes <dir>/<product>/redist/redistrib_<v>.json (listing only the mirrored components) and
// every archive at its relative path, each checked against its sha256 (a mismatch removes the
// file). Downloads run in parallel and resume.
Status create_mirror_release(const fs::path& dir, const std::string& upstream,
                             const MirrorRelease& release, const InstallSettings& settings,
                             InstallObserver& observer);

// Publishes the compatibility database in use (the compiled-in one, or a newer one `cudaenv db
// update` installed in `data_root`) under <dir>/cudaenv/db/, for `cudaenv db update --mirror` on
// the machines the mirror serves.
Result<manifest::DbIndex> publish_database_in_use(const fs::path& dir, const fs::path& data_root);

}  // namespace cudaenv::install
