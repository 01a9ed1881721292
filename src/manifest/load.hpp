#pragma once
// Reading the database from its TOML files.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/database.hpp"

namespace cudaenv::manifest {

struct ManifestFile {
  std::string name;  // "cuda.toml": which part of the database the file holds
  std::string text;
  std::string origin = {};  // where it came from, for error messages; defaults to name
};

// The manifests/ files compiled into the binary.
const std::vector<ManifestFile>& embedded_manifests();

// Parses a complete set of manifest files. Errors name the file, the line and the key.
Result<Database> load_database(const std::vector<ManifestFile>& files);

// The [meta] revision of one file; an error when it does not parse.
Result<std::string> manifest_revision(const ManifestFile& file);

// The compiled-in files with `replacements` put in place of those of the same name (and any
// other name added): how a database from the data root is read, parsed and checked.
Result<Database> load_over_embedded(const std::vector<ManifestFile>& replacements);

// Where the database in use came from: `cudaenv db`, and the age notes of resolve and doctor.
struct DatabaseOrigin {
  enum class Kind { compiled_in, downloaded, local_copies };
  Kind kind = Kind::compiled_in;
  std::string revision;
  std::string date;                      // YYYY-MM-DD; "" when the revision carries none
  std::filesystem::path directory;       // <data root>/manifests, when it supplies the database
  std::string url;                       // downloaded: the index it came from
  std::string updated_at;                // downloaded: when (UTC)
  std::vector<std::string> local_files;  // local copies: the files that replace compiled-in ones
  std::string note;                      // why a database in the data root is not used
};

struct SelectedDatabase {
  Database db;
  DatabaseOrigin origin;
  std::vector<ManifestFile> files;  // what it was loaded from (`mirror create` publishes them)
};

// The database to use. <data_root>/manifests holding a database.json (what `cudaenv db update`
// installs) is a whole database, used when its revision is newer than the compiled-in one.
// Without it, each file there replaces the compiled-in file of its name when its [meta]
// revision is newer. Either way the directory and the files used must be owned by the user (or
// root) and writable by nobody else, and a copy in use that does not parse is an error, not
// silently skipped.
Result<SelectedDatabase> load_selected_database(const std::filesystem::path& data_root);
Result<Database> load_default_database(const std::filesystem::path& data_root);

}  // namespace cudaenv::manifest
