#include "install/lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <sys/file.h>
#include <sys/stat.h>

#include "install/writable.hpp"

namespace cudaenv::install {

namespace {

// Whether the open lock `fd` is still the file at `path`: a lock taken on a file another
// process deleted (and perhaps re-created) in between guards nothing.
bool still_at_path(int fd, const fs::path& path) {
  struct stat opened {};
  struct stat named {};
  if (::fstat(fd, &opened) != 0 || ::stat(path.c_str(), &named) != 0) return false;
  return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

Result<int> open_lock_file(const fs::path& lock_file) {
  std::error_code ec;
  fs::create_directories(lock_file.parent_path(), ec);
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // flock needs no write access: a lock file someone else created (a shared store) still locks,
  // and the write that follows, if any, says what is in the way.
  const int open_error = errno;
  if (fd < 0 && open_error == EACCES)
    fd = ::open(lock_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return unwritable_error(lock_file, open_error);
  return fd;
}

}  // namespace

Result<InstallLock> InstallLock::acquire(const fs::path& lock_file,
                                         const std::function<void()>& on_wait,
                                         const std::function<void(const std::string&)>& on_note) {
  bool told = false;
  const auto tell = [&] {
    if (on_wait && !told) on_wait();
    told = true;
  };
  while (true) {
    auto fd = open_lock_file(lock_file);
    if (!fd) return fd.error();
    if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
      tell();
      if (::flock(*fd, LOCK_EX) != 0) {
        ::close(*fd);
        return make_error(ErrorKind::failure, "cannot lock " + lock_file.string());
      }
    }
    if (!still_at_path(*fd, lock_file)) {
      ::close(*fd);  // deleted while we waited: lock the file that is there now
      continue;
    }
    auto claim = OwnerClaim::claim(lock_file, true, tell, on_note);
    if (!claim) {
      ::close(*fd);
      return claim.error();
    }
    return InstallLock(*fd, lock_file, std::move(**claim));
  }
}

Result<std::optional<InstallLock>> InstallLock::try_acquire(const fs::path& lock_file) {
  // A few rounds: each one lost only to a deletion that happened in between.
  for (int round = 0; round < 8; ++round) {
    auto fd = open_lock_file(lock_file);
    if (!fd) return fd.error();
    if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(*fd);
      return std::optional<InstallLock>{};
    }
    if (!still_at_path(*fd, lock_file)) {
      ::close(*fd);
      continue;
    }
    auto claim = OwnerClaim::claim(lock_file, false, {}, {});
    if (!claim || !*claim) {
      ::close(*fd);
      if (!claim) return claim.error();
      return std::optional<InstallLock>{};  // held on another host
    }
    return std::optional<InstallLock>(InstallLock(*fd, lock_file, std::move(**claim)));
  }
  return std::optional<InstallLock>{};
}

bool InstallLock::is_held(const fs::path& lock_file) {
  if (has_live_owner(lock_file)) return true;
  const int fd = ::open(lock_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases it if we took it
  return busy;
}

void InstallLock::remove_file() && {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  claim_.reset();
  ::close(fd_);
  fd_ = -1;
}

InstallLock::InstallLock(InstallLock&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), claim_(std::move(other.claim_)) {
  other.fd_ = -1;
  other.claim_.reset();
}

InstallLock::~InstallLock() {
  claim_.reset();              // the owner file goes first: nobody sees it without a holder
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace cudaenv::install
