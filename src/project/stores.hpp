#pragma once
// The stores a user sees: their own data root, then the read-only system stores an admin filled
// (docs/cluster.md). CUDAENV_SYSTEM_ROOTS (':'-separated) names them, else `system_roots` in the
// system config, /etc/cudaenv/config.toml ($CUDAENV_SYSTEM_CONFIG names another file).

#include <filesystem>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "install/store.hpp"

namespace cudaenv::project {

std::filesystem::path system_config_file(const Environment& env);

// The system stores, in order. Empty entries are skipped, and so is the user's own root. A
// relative entry (of CUDAENV_SYSTEM_ROOTS or the system config) is an error, ErrorKind::usage, and
// so is a malformed system config, naming its file and line.
Result<std::vector<std::filesystem::path>> system_roots(const Environment& env);

// The user's store with the system stores behind it. A system store that another user could
// write into (see core/ownership.hpp) is left out, and so are all of them when the system config
// cannot be read: the commands that report (list, doctor, modules write) say why.
install::Store store_for(const Environment& env);

}  // namespace cudaenv::project
