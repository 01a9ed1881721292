#include "core/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "core/fd.hpp"

namespace cudaenv {

namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

Error read_error(const std::filesystem::path& path, int error_number) {
  if (error_number == ENOENT || error_number == ENOTDIR)
    return make_error(ErrorKind::not_found, path.string() + ": no such file");
  if (error_number == EAGAIN)
    return make_error(ErrorKind::failure,
                      path.string() + ": not a regular file (reading it would block)");
  return make_error(ErrorKind::failure,
                    "cannot read " + path.string() + ": " + std::strerror(error_number));
}

// /proc and /sys files say they are empty and are not: /proc/self/pagemap streams for gigabytes,
// and reading /proc/kmsg takes the messages away from the system log.
bool is_kernel_file(int fd) {
  struct statfs filesystem {};
  if (::fstatfs(fd, &filesystem) != 0) return false;
  return filesystem.f_type == PROC_SUPER_MAGIC || filesystem.f_type == SYSFS_MAGIC;
}

std::string size_text(std::size_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB"
                           : std::to_string(bytes) + " bytes";
}

Error too_large(const std::filesystem::path& path, std::size_t limit = small_file_limit) {
  return make_error(ErrorKind::failure, path.string() + ": larger than " + size_text(limit));
}

// Reads at most one byte more than the limit: a /proc file reports size 0 and may never end.
Result<std::string> read_bounded(int fd, const std::filesystem::path& path,
                                 std::size_t limit = small_file_limit) {
  std::string content;
  char buffer[4096];
  while (content.size() <= limit) {
    const auto got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return read_error(path, errno);
    if (got == 0) return content;
    content.append(buffer, static_cast<std::size_t>(got));
  }
  return too_large(path, limit);
}

// Non-blocking: opening a FIFO without a writer, or reading /proc/kmsg, would wait forever.
UniqueFd open_for_reading(const std::filesystem::path& path) {
  return UniqueFd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
}

}  // namespace

Result<std::string> read_small_file(const std::filesystem::path& path) {
  const auto file = open_for_reading(path);
  const int fd = file.get();
  if (fd < 0) return read_error(path, errno);
  struct stat status {};
  Result<std::string> result = std::string();
  if (::fstat(fd, &status) != 0) {
    result = read_error(path, errno);
  } else if (!S_ISREG(status.st_mode)) {
    result = make_error(ErrorKind::failure, path.string() + ": not a regular file (" +
                                                file_type_name(status.st_mode) + ")");
  } else if (is_kernel_file(fd)) {
    result = make_error(ErrorKind::failure,
                        path.string() + ": not a regular file (a kernel file in /proc or /sys)");
  } else if (static_cast<std::uintmax_t>(status.st_size) > small_file_limit) {
    result = too_large(path);
  } else {
    result = read_bounded(fd, path);
  }
  return result;
}

Result<std::string> read_bounded_file(const std::filesystem::path& path, std::size_t limit) {
  const auto file = open_for_reading(path);
  const int fd = file.get();
  if (fd < 0) return read_error(path, errno);
  struct stat status {};
  if (::fstat(fd, &status) != 0) return read_error(path, errno);
  if (!S_ISREG(status.st_mode))
    return make_error(ErrorKind::failure, path.string() + ": not a regular file (" +
                                              file_type_name(status.st_mode) + ")");
  return read_bounded(fd, path, limit);
}

Result<std::string> read_small_file_or_empty(const std::filesystem::path& path) {
  auto text = read_small_file(path);
  if (!text && text.error().kind == ErrorKind::not_found) return std::string();
  return text;
}

bool is_executable_file(const std::filesystem::path& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

}  // namespace cudaenv
