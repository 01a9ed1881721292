#pragma once
// Small files read and written whole. Reading uses POSIX calls: The prompt hook's program reads
// .cudaenv and the config this way: a std::ifstream would initialise the C++ locale machinery,
// which costs more at start-up than everything else the hook does.

#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace cudaenv {

// The file's contents; nullopt when it cannot be opened or read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

// Writes `text` beside `path` and renames it over `path` (creating the parent directories): an
// interrupted write leaves the old file whole. Errors name the file.
Status write_file_atomically(const std::filesystem::path& path, const std::string& text);

// A regular file (after links) this process may execute.
bool is_executable_file(const std::filesystem::path& path);

}  // namespace cudaenv
