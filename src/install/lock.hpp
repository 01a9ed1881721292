#pragma once
// Locks on the store's entries: one lock file per install target (<dir>/.lock-<name>) and one
// per cached download (<file>.lock). Lock files may be deleted (`cudaenv cache prune`): whoever
// deletes one holds it while unlinking it, and whoever takes one checks afterwards that the path
// still names the file it locked, so a lock taken on a deleted file is never trusted.
//
// flock alone locks only within one host on a network filesystem: a holder also creates an owner
// file beside the lock file with O_EXCL, naming its host, pid and start time (lock_owner.hpp).
// A second host waits for it; a stale one (a dead process, a host that stopped refreshing it) is
// taken over with a note.

#include <filesystem>
#include <functional>
#include <optional>

#include "core/error.hpp"
#include "core/fd.hpp"
#include "install/lock_owner.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

// An exclusive lock on one install target or download, held while the object lives. A second
// process installing the same version waits for it.
class InstallLock {
 public:
  // `on_wait` is called once if the lock is busy, before waiting; `on_note` hears of a stale
  // holder's lock taken over. The wait polls, so a signal (install/interrupt.hpp) ends it within
  // 100 ms with the signal's error, however it arrived.
  static Result<InstallLock> acquire(const fs::path& lock_file,
                                     const std::function<void()>& on_wait,
                                     const std::function<void(const std::string&)>& on_note = {});
  // The lock if it is free now, nullopt when another holder has it; never waits.
  static Result<std::optional<InstallLock>> try_acquire(const fs::path& lock_file);
  // Whether someone holds the lock now (here, or on another host through its owner file).
  // Creates nothing: a missing lock file is free.
  static bool is_held(const fs::path& lock_file);

  // Deletes the lock file while still holding it, then releases it.
  void remove_file() &&;

  InstallLock(InstallLock&& other) noexcept;
  InstallLock& operator=(InstallLock&&) = delete;
  InstallLock(const InstallLock&) = delete;
  InstallLock& operator=(const InstallLock&) = delete;
  ~InstallLock();

 private:
  InstallLock(UniqueFd fd, fs::path path, OwnerClaim claim)
      : fd_(std::move(fd)), path_(std::move(path)), claim_(std::move(claim)) {}
  UniqueFd fd_;  // closing it releases the flock
  fs::path path_;
  std::optional<OwnerClaim> claim_;
};

}  // namespace cudaenv::install
