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

  // Whether the file shrank while mapped (another process truncated it): reading a page past its
  // new end raises SIGBUS, which a handler turns into zero pages for the mappings this class
  // made, so the parsers read zeros instead of the process dying. What they read then is not the
  // file: the caller reports it as changed while read.
  bool changed() const;

 private:
  MappedFile(const unsigned char* data, size_t size, int slot)
      : data_(data), size_(size), slot_(slot) {}
  void release();
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;  // its entry in the SIGBUS guard's table; -1: not guarded (empty, or table full)
};

}  // namespace cudaenv::scan
