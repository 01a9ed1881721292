#pragma once
// Installing a downloaded database into <data root>/manifests in one step: the files arrive in a
// staging directory beside it (same filesystem), are parsed and checked like the compiled-in
// database, flushed to disk, and the directory is renamed into place. A failure or a kill at
// any point leaves the old database in place; the next update clears the leftovers.

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "manifest/db_index.hpp"

namespace cudaenv::manifest {

// Removes what an interrupted update left in `data_root` (staging and set-aside directories),
// then creates a fresh, private staging directory there.
Result<std::filesystem::path> make_db_staging(const std::filesystem::path& data_root);

// The staged files (named by the index) parse and pass the same checks as the compiled-in
// database, and their [meta] revision is the index's. Errors name the file and the line.
Status check_staged_database(const std::filesystem::path& staging, const DbIndex& index);

// What committing did with what was in place before.
struct DbCommit {
  // Files placed in manifests/ by hand (no database.json) are kept here, not deleted.
  std::filesystem::path kept_local_copies;
};

// Writes the record into the staging directory, flushes every file and the directory, and
// renames it to <data_root>/manifests (exchanging it with the old one where that exists).
Result<DbCommit> commit_database(const std::filesystem::path& staging,
                                 const std::filesystem::path& data_root, const DbRecord& record);

}  // namespace cudaenv::manifest
