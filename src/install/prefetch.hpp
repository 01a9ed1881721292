#pragma once
// Every archive of several installs downloaded into the cache and checked against its sha256
// before any of them is extracted or placed: `sync` installs a toolkit and a cuDNN from one lock,
// and one archive that does not match must leave both uninstalled, not the first one in place.

#include <vector>

#include "core/error.hpp"
#include "install/installer.hpp"

namespace cudaenv::install {

// The archives of `plans`, in order, that are not installed yet (a plan whose prefix holds a
// receipt is skipped, as run_install would skip it).
std::vector<SelectedArchive> archives_to_fetch(const std::vector<InstallPlan>& plans);

// Downloads the archives of `plans` that are not installed yet into the download cache, in
// parallel (settings.jobs) and resumable (bytes already cached are kept), each checked against
// its sha256 as it streams. A mismatch discards the cached file and is ErrorKind::integrity,
// naming the archive's URL and both digests. Observer indexes follow archives_to_fetch. The
// installs that follow replay the cached archives and check them again.
Status fetch_and_check(const std::vector<InstallPlan>& plans, const Store& store,
                       const InstallSettings& settings, InstallObserver& observer);

}  // namespace cudaenv::install
