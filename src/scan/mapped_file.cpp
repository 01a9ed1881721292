#include "scan/mapped_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/mman.h>
#include <sys/stat.h>

#include "core/fd.hpp"

namespace cudaenv::scan {

namespace {

Error open_error(const std::filesystem::path& path, const std::string& why) {
  return make_error(ErrorKind::failure, path.string() + ": " + why);
}

}  // namespace

Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return open_error(path, std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return open_error(path, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return open_error(path, "not a regular file");
  if (static_cast<uint64_t>(info.st_size) > max_size)
    return open_error(path, "larger than " + std::to_string(max_size >> 30) +
                                " GiB (the size limit of a file read)");
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return MappedFile(nullptr, 0);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data == MAP_FAILED) return open_error(path, std::strerror(errno));
  return MappedFile(static_cast<const unsigned char*>(data), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace cudaenv::scan
