#pragma once
// `cudaenv db update`: a newer compatibility database from <mirror>/cudaenv/db/, every file
// checked against the sha256 and size its index lists, installed in one step into
// <data root>/manifests. And the other side: publishing a database under a mirror directory.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fetch/http.hpp"
#include "manifest/db_index.hpp"
#include "manifest/load.hpp"

namespace cudaenv::install {

std::string db_index_url(const std::string& mirror);
std::string db_file_url(const std::string& mirror, const std::string& revision,
                        const std::string& name);

struct DbUpdateRequest {
  std::string mirror;  // normalized base URL
  std::filesystem::path data_root;
  std::string revision_in_use;
  fetch::FetchOptions fetch;
};

struct DbUpdateResult {
  bool installed = false;  // false: the mirror's revision is not newer than the one in use
  manifest::DbIndex index;
  std::string url;  // the index's
  std::filesystem::path kept_local_copies;
};

// Fetches the index; when its revision is newer than the one in use, downloads every file into
// a staging directory (sha256 and size checked as they stream), loads them like the compiled-in
// database and installs them. Errors: ErrorKind::network when the mirror cannot be reached,
// ErrorKind::integrity for a file that does not match its index, or an index or database that
// is damaged. On any error the database in use is untouched.
Result<DbUpdateResult> update_database(const DbUpdateRequest& request);

// Writes `files` as revision `revision` below <dir>/cudaenv/db/ with their index, the index
// last (a mirror never names files that are not all there).
Result<manifest::DbIndex> publish_database(const std::filesystem::path& dir,
                                           const std::vector<manifest::ManifestFile>& files,
                                           const std::string& revision, const std::string& date);

}  // namespace cudaenv::install
