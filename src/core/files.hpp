#pragma once
// Small files read and written whole. Reading uses POSIX calls: The prompt hook's program reads
// .cudaenv and the config this way: a std::ifstream would initialise the C++ locale machinery,
// which costs more at start-up than everything else the hook does.

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/error.hpp"

namespace cudaenv {

// What read_small_file reads at most: a .cudaenv or a config is a few lines.
constexpr std::size_t small_file_limit = std::size_t{64} * 1024;

// The contents of `path` (links followed) when it is a regular file of at most 64 KiB. Anything
// else is refused without blocking or reading more than the limit: a FIFO or a device (opened
// non-blocking), a directory, a huge or sparse file, a /proc or /sys file (they say they are
// empty and may stream without end). Errors name the file and why: ErrorKind::not_found when it
// does not exist, else ErrorKind::failure ("<path>: not a regular file (a FIFO)", "<path>: larger
// than 64 KiB", "cannot read <path>: <reason>"). No hint: the caller knows what the file is for.
Result<std::string> read_small_file(const std::filesystem::path& path);

// The first `limit` bytes' worth of a kernel file (/proc/driver/nvidia/version) or a small regular
// file: opened non-blocking and refused unless regular, so a FIFO or a device put in its place
// (under a sysroot) cannot block; more than `limit` bytes is an error, never a longer read.
// Errors as read_small_file's.
Result<std::string> read_bounded_file(const std::filesystem::path& path, std::size_t limit);

// As read_small_file, with a missing file read as empty.
Result<std::string> read_small_file_or_empty(const std::filesystem::path& path);

// A regular file (after links) this process may execute.
bool is_executable_file(const std::filesystem::path& path);

}  // namespace cudaenv
