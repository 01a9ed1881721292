#pragma once
// Why the store cannot be written, said so a user can act on it: whose directory is in the way
// and the ways out (CUDAENV_ROOT, running as its owner, asking the administrator).

#include <filesystem>

#include "core/error.hpp"

namespace cudaenv::install {

// Creates `dir` (and its parents) when missing and checks that this process may create entries
// in it; else unwritable_error for it. Called before anything is downloaded.
Status ensure_writable_directory(const std::filesystem::path& dir);

// The error for `path` that could not be created or written (errno `error_number`): names the
// directory in the way, its owner or mode, or the read-only filesystem, and the fix.
Error unwritable_error(const std::filesystem::path& path, int error_number);
// The same for `path` that could not be renamed or deleted: its directory is what refused.
Error unremovable_error(const std::filesystem::path& path, int error_number);

}  // namespace cudaenv::install
