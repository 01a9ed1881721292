#include "install/lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>
#include <thread>

#include <sys/file.h>
#include <sys/stat.h>

#include "install/interrupt.hpp"
#include "install/writable.hpp"

namespace cudaenv::install {

namespace {

// How often a wait for a busy lock looks again (and at a signal).
constexpr std::chrono::milliseconds poll_every{100};

// Whether the open lock `fd` is still the file at `path`: a lock taken on a file another
// process deleted (and perhaps re-created) in between guards nothing.
bool still_at_path(int fd, const fs::path& path) {
  struct stat opened {};
  struct stat named {};
  if (::fstat(fd, &opened) != 0 || ::stat(path.c_str(), &named) != 0) return false;
  return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

Result<UniqueFd> open_lock_file(const fs::path& lock_file) {
  std::error_code ec;
  fs::create_directories(lock_file.parent_path(), ec);
  UniqueFd fd(::open(lock_file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  // flock needs no write access: a lock file someone else created (a shared store) still locks,
  // and the write that follows, if any, says what is in the way.
  const int open_error = errno;
  if (!fd && open_error == EACCES)
    fd = UniqueFd(::open(lock_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return unwritable_error(lock_file, open_error);
  return fd;
}

// Takes the flock on `fd`, waiting while another process holds it. Not a blocking flock(): a
// signal that lands just before such a call is recorded but never interrupts it, and the wait
// would last as long as the other install. Polling sees it within `poll_every`.
Status lock_waiting(const UniqueFd& fd, const fs::path& lock_file,
                    const std::function<void()>& tell) {
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return make_error(ErrorKind::failure, "cannot lock " + lock_file.string() + ": " +
                                                std::system_category().message(errno));
    tell();
    if (const int signal = InterruptGuard::caught())
      return interrupted_error(signal, "the wait for " + lock_file.string());
    std::this_thread::sleep_for(poll_every);
  }
  return Ok{};
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
    if (auto locked = lock_waiting(*fd, lock_file, tell); !locked) return locked.error();
    if (!still_at_path(fd->get(), lock_file))
      continue;  // deleted while we waited: lock the new one
    auto claim = OwnerClaim::claim(lock_file, true, tell, on_note);
    if (!claim) return claim.error();
    return InstallLock(std::move(*fd), lock_file, std::move(**claim));
  }
}

Result<std::optional<InstallLock>> InstallLock::try_acquire(const fs::path& lock_file) {
  // A few rounds: each one lost only to a deletion that happened in between.
  for (int round = 0; round < 8; ++round) {
    auto fd = open_lock_file(lock_file);
    if (!fd) return fd.error();
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) return std::optional<InstallLock>{};
    if (!still_at_path(fd->get(), lock_file)) continue;
    auto claim = OwnerClaim::claim(lock_file, false, {}, {});
    if (!claim) return claim.error();
    if (!*claim) return std::optional<InstallLock>{};  // held on another host
    return std::optional<InstallLock>(InstallLock(std::move(*fd), lock_file, std::move(**claim)));
  }
  return std::optional<InstallLock>{};
}

bool InstallLock::is_held(const fs::path& lock_file) {
  if (has_live_owner(lock_file)) return true;
  const UniqueFd fd(::open(lock_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return false;
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;  // closing releases it
}

void InstallLock::remove_file() && {
  if (!fd_) return;
  ::unlink(path_.c_str());
  claim_.reset();
  fd_ = UniqueFd();
}

InstallLock::InstallLock(InstallLock&& other) noexcept
    : fd_(std::move(other.fd_)), path_(std::move(other.path_)), claim_(std::move(other.claim_)) {
  other.claim_.reset();
}

InstallLock::~InstallLock() {
  claim_.reset();  // the owner file goes first: nobody sees it without a holder
}

}  // namespace cudaenv::install
