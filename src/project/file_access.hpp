#pragma once
// Whether `cudaenv use` may replace a .cudaenv or config.toml, with errors that name the real
// cause: the file belongs to another user, or its directory is not writable by you.

#include <filesystem>
#include <string>

#include "core/error.hpp"

namespace cudaenv::project {

// Ok when `file` is absent or owned by the effective user, and the directory that would hold it
// (or its nearest existing parent, which would be created into) is writable. Else an
// ErrorKind::failure naming the file or directory, its owner and why, with a hint ending in
// `instead` (another way to the same end, e.g. "set CUDAENV_VERSION=12.4 in your shell").
Status check_replaceable(const std::filesystem::path& file, const std::string& instead);

}  // namespace cudaenv::project
