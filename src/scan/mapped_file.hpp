#pragma once
// A file mapped read-only into memory, for reading large binaries (a torch install holds
// libraries over a gigabyte) while touching only the pages a parser looks at.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

#include "core/error.hpp"

namespace cudaenv::scan {

class MappedFile {
 public:
  // Far above any real library (libtorch_cuda.so is under 2 GiB), and a bound on the time a
  // parser spends on one sparse file that claims terabytes.
  static constexpr uint64_t max_size = uint64_t{16} << 30;

  // Maps a regular file (links followed). Anything else — a FIFO, a device, a directory — is
  // refused without blocking, and so is a file larger than max_size; an empty file maps to an
  // empty span.
  static Result<MappedFile> open(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const unsigned char> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const unsigned char* data, size_t size) : data_(data), size_(size) {}
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace cudaenv::scan
