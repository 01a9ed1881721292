#pragma once
// What `sync` installs is what both the lock and the mirror vouch for: the archives a lock lists
// for a release must be exactly those the mirror's manifest of that release names for the lock's
// platform (and cuDNN variant), each with the same name, version, relative path, sha256 and size.
// A lock that files one release's archives under another, lists cudart's archive as nvcc, lists
// none, or pins a digest the manifest does not is refused before anything is fetched.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "install/components.hpp"
#include "lock/lock_file.hpp"

namespace cudaenv::lock {

// Where the archives come from, for the messages: "CUDA 12.4.1" and the manifest's URL.
struct Offer {
  std::string release;  // "CUDA 12.4.1", "cuDNN 9.1.0 (cuda12)"
  std::string manifest_url;
  std::vector<install::SelectedArchive> archives;
  // What manifest_url is, for the messages: a mirror's manifest, or a package index.
  std::string vouched_by = "the mirror's manifest";
};

// Ok when `locked` (the lock's `field`: "toolkit" or "cudnn") and `offer` name the same archives
// field for field; else ErrorKind::integrity naming the lock file, the first disagreement and
// both values, with the hint that nothing was installed.
Status check_archives(const std::vector<LockedArchive>& locked, const Offer& offer,
                      const std::string& field, const std::string& lock_path);

}  // namespace cudaenv::lock
