#pragma once
// Reading a small file whole with POSIX calls. The prompt hook's program reads .cudaenv and the
// config this way: a std::ifstream would initialise the C++ locale machinery, which costs more
// at start-up than everything else the hook does.

#include <filesystem>
#include <optional>
#include <string>

namespace cudaenv {

// The file's contents; nullopt when it cannot be opened or read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

}  // namespace cudaenv
