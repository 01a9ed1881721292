#pragma once
// `cudaenv cache`: what the store keeps besides the installs (downloads, manifests, verify's
// builds) and what killed or finished installs left (staging directories, lock files), which of
// it anything still needs, and removing the rest. Nothing a running install holds is touched:
// staging directories and downloads are removed only under the locks installs take.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

enum class CacheKind { download, manifest, verify_build, staging, lock, unpacked };

// needed: an installed version uses it (or it is a cache `clean` alone removes); unneeded: `prune`
// removes it; in_use: a running install holds it, nothing removes it now.
enum class CacheNeed { needed, unneeded, in_use };

struct CacheEntry {
  CacheKind kind = CacheKind::download;
  fs::path path;
  std::uint64_t bytes = 0;
  CacheNeed need = CacheNeed::needed;
};

struct CacheSurvey {
  std::vector<CacheEntry> entries;
  // Why every download counts as needed: an installed prefix whose receipt cannot be read (its
  // archives are unknown, so none is called unneeded).
  std::optional<std::string> downloads_kept_because;
  // Disk the shared unpacked store saves: each file linked into k prefixes is stored once
  // instead of k times, (k - 1) x its size.
  std::uint64_t shared_bytes_saved = 0;
};

// Looks at the store without changing it.
CacheSurvey survey_cache(const Store& store);

struct CacheCleanup {
  std::vector<CacheEntry> removed;  // also staging directories put back in place
  std::vector<CacheEntry> in_use;   // left alone: a running install holds them
  std::vector<Error> failures;      // what could not be removed, and why
  std::uint64_t bytes_freed = 0;
};

// Removes the downloads, the cached manifests, verify's builds and the unpacked trees no prefix
// links (not a download an install is writing): they are only caches, fetched or rebuilt when
// needed again. An unpacked tree installed prefixes link stays: removing it frees nothing.
CacheCleanup clean_cache(const Store& store);

// Removes only what nothing needs: stale staging directories of killed installs (a prefix a
// killed reinstall set aside is put back instead), downloads and manifests of versions no longer
// installed, and lock files of versions not installed.
CacheCleanup prune_cache(const Store& store);

// "download", "manifest", "verify build", "staging", "lock", "unpacked".
std::string cache_kind_name(CacheKind kind);

}  // namespace cudaenv::install
