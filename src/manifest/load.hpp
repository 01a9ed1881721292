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

// The compiled-in files, each replaced by <data_root>/manifests/<name> when that copy's
// [meta] revision is newer. A newer copy that does not parse is an error, not silently skipped.
Result<Database> load_default_database(const std::filesystem::path& data_root);

}  // namespace cudaenv::manifest
