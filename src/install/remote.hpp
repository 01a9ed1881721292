#pragma once
// A mirror: a base URL with NVIDIA's layout below it (<base>/cuda/redist/redistrib_<v>.json,
// <base>/<product>/redist/<relative_path>). http://, https:// and file:// bases all work.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "fetch/http.hpp"
#include "install/store.hpp"
#include "manifest/redist.hpp"

namespace cudaenv::install {

constexpr const char* nvidia_base_url = "https://developer.download.nvidia.com/compute";

// A base URL without trailing slashes; a plain absolute directory becomes a file:// URL.
std::string normalize_mirror(std::string base);

std::string redist_dir_url(const std::string& base, const std::string& product);
std::string manifest_url(const std::string& base, const std::string& product,
                         const Version& version);
std::string archive_url(const std::string& base, const std::string& product,
                        const std::string& relative_path);

// Versions whose redistrib_<v>.json the mirror's directory index lists, newest first. Reads an
// HTML autoindex (NVIDIA's, nginx's, Python's http.server's) or, for file://, the directory.
Result<std::vector<Version>> list_remote_versions(const std::string& base,
                                                  const std::string& product,
                                                  const fetch::FetchOptions& options);

// The versions named in an HTML directory index: every href to redistrib_<v>.json.
std::vector<Version> versions_in_index(const std::string& html);

// Fetches and validates a release's manifest, keeping a copy in the store's manifest cache.
Result<manifest::RedistManifest> fetch_manifest(const std::string& base, const std::string& product,
                                                const Version& version, const Store& store,
                                                const fetch::FetchOptions& options,
                                                std::string* raw = nullptr);

}  // namespace cudaenv::install
