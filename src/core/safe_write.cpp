#include "core/safe_write.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <sys/random.h>
#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/umask_lock.hpp"

namespace cudaenv {

namespace {

namespace fs = std::filesystem;

Error write_error(const fs::path& path, const std::string& reason) {
  return make_error(ErrorKind::failure, "cannot write " + path.string() + ": " + reason);
}

Error write_error(const fs::path& path, int error_number) {
  return write_error(path, std::strerror(error_number));
}

// 64 bits from the kernel's random source, as 16 hex digits.
std::string random_suffix() {
  std::array<unsigned char, 8> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const auto got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    filled += static_cast<std::size_t>(got);
  }
  // Without a random source the name is still unique per process and call, and O_EXCL keeps the
  // write safe: a planted name is an EEXIST, never followed.
  if (filled < bytes.size()) {
    static unsigned counter = 0;
    const unsigned long long fallback =
        (static_cast<unsigned long long>(::getpid()) << 32) ^ ++counter ^
        static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(&filled));
    std::memcpy(bytes.data(), &fallback, bytes.size());
  }
  std::string out;
  for (const auto byte : bytes) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", byte);
    out += hex;
  }
  return out;
}

Result<std::string> checked_file_name(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") return write_error(path, "not a file name");
  return name;
}

Result<UniqueFd> open_parent(const fs::path& path, CreateParents parents) {
  fs::path parent = path.parent_path();
  if (parent.empty()) parent = ".";
  if (parents == CreateParents::yes) {
    std::error_code ignored;  // a failure shows as the open's error below
    fs::create_directories(parent, ignored);
  }
  UniqueFd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return write_error(path, errno);
  return dir;
}

// The permission bits a replacement keeps: the old regular file's, without set-id bits.
unsigned mode_for(int dir, const std::string& name, unsigned fallback) {
  struct stat old {};
  if (::fstatat(dir, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode))
    return old.st_mode & 0777U;
  return fallback;
}

Result<std::string> create_temporary(int dir, const fs::path& path, const std::string& name,
                                     unsigned mode, UniqueFd& out) {
  constexpr int attempts = 16;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    std::string temporary = temporary_name_for(name);
    int fd = -1;
    {
      const std::lock_guard guard(umask_lock());  // an extraction may have the umask at 0
      fd = ::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    mode);
    }
    if (fd >= 0) {
      out = UniqueFd(fd);
      if (::fchmod(fd, mode & ~static_cast<unsigned>(S_ISUID | S_ISGID | S_ISVTX)) != 0 &&
          errno != EPERM)
        return write_error(path, errno);
      return temporary;
    }
    if (errno != EEXIST) return write_error(path, errno);
  }
  return write_error(path, "no unused temporary name beside it");
}

Status write_unsynced(int fd, std::string_view text, const fs::path& path) {
  while (!text.empty()) {
    const auto wrote = ::write(fd, text.data(), text.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return write_error(path, wrote < 0 ? errno : EIO);
    text.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return Ok{};
}

Status write_all(int fd, std::string_view text, const fs::path& path) {
  if (auto written = write_unsynced(fd, text, path); !written) return written;
  if (::fsync(fd) != 0 && errno != EINVAL) return write_error(path, errno);
  return Ok{};
}

}  // namespace

std::string temporary_name_for(std::string_view name) {
  const std::string suffix = ".tmp-" + random_suffix();
  const std::size_t room = NAME_MAX - 1 - suffix.size();
  return "." + std::string(name.substr(0, room)) + suffix;
}

Status write_file_atomically_at(int dir, const std::string& name, std::string_view text,
                                const fs::path& shown, unsigned mode) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return write_error(shown, "not a file name");
  struct stat existing {};
  if (::fstatat(dir, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISDIR(existing.st_mode))
    return write_error(shown, "a directory is in the way");

  UniqueFd file;
  auto temporary = create_temporary(dir, shown, name, mode_for(dir, name, mode), file);
  if (!temporary) return temporary.error();
  Status written = write_all(file.get(), text, shown);
  if (written) written = file.close(shown.string());
  if (written && ::renameat(dir, temporary->c_str(), dir, name.c_str()) != 0)
    written = write_error(shown, errno);
  if (!written) {
    ::unlinkat(dir, temporary->c_str(), 0);
    return written;
  }
  ::fsync(dir);  // the rename itself durable; a failure here loses nothing written
  return Ok{};
}

Status write_file_atomically(const fs::path& path, std::string_view text,
                             const WriteOptions& options) {
  auto name = checked_file_name(path);
  if (!name) return name.error();
  auto dir = open_parent(path, options.parents);
  if (!dir) return dir.error();
  return write_file_atomically_at(dir->get(), *name, text, path, options.mode);
}

Status replace_symlink_atomically(const fs::path& link, const fs::path& target) {
  auto name = checked_file_name(link);
  if (!name) return name.error();
  auto dir = open_parent(link, CreateParents::yes);
  if (!dir) return dir.error();
  constexpr int attempts = 16;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const std::string temporary = temporary_name_for(*name);
    if (::symlinkat(target.c_str(), dir->get(), temporary.c_str()) != 0) {
      if (errno == EEXIST) continue;
      return write_error(link, errno);
    }
    if (::renameat(dir->get(), temporary.c_str(), dir->get(), name->c_str()) != 0) {
      const int error_number = errno;
      ::unlinkat(dir->get(), temporary.c_str(), 0);
      return write_error(link, error_number);
    }
    return Ok{};
  }
  return write_error(link, "no unused temporary name beside it");
}

Result<UniqueFd> open_for_append(const fs::path& path) {
  int fd = -1;
  {
    const std::lock_guard guard(umask_lock());
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                0644);
  }
  if (fd < 0)
    return write_error(path, errno == ELOOP ? std::string("a symlink is in the way")
                                            : std::string(std::strerror(errno)));
  UniqueFd file(fd);
  struct stat status {};
  if (::fstat(fd, &status) != 0) return write_error(path, errno);
  if (!S_ISREG(status.st_mode)) return write_error(path, "not a regular file");
  return file;
}

Status append_to_file(const fs::path& path, std::string_view text) {
  auto file = open_for_append(path);
  if (!file) return file.error();
  if (auto written = write_unsynced(file->get(), text, path); !written) return written;
  return file->close(path.string());
}

}  // namespace cudaenv
