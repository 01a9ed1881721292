#pragma once
// Locks on the store's entries: one lock file per install target (<dir>/.lock-<name>) and one
// per cached download (<file>.lock). Lock files may be deleted (`cudaenv cache prune`): whoever
// deletes one holds it while unlinking it, and whoever takes one checks afterwards that the path
// still names the file it locked, so a lock taken on a deleted file is never trusted.

#include <filesystem>
#include <functional>
#include <optional>

#include "core/error.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

// An exclusive lock on one install target or download, held while the object lives. A second
// process installing the same version waits for it.
class InstallLock {
 public:
  // `on_wait` is called once if the lock is busy, before blocking.
  static Result<InstallLock> acquire(const fs::path& lock_file,
                                     const std::function<void()>& on_wait);
  // The lock if it is free now, nullopt when another holder has it; never waits.
  static Result<std::optional<InstallLock>> try_acquire(const fs::path& lock_file);
  // Whether someone holds the lock now. Creates nothing: a missing lock file is free.
  static bool is_held(const fs::path& lock_file);

  // Deletes the lock file while still holding it, then releases it.
  void remove_file() &&;

  InstallLock(InstallLock&& other) noexcept;
  InstallLock& operator=(InstallLock&&) = delete;
  InstallLock(const InstallLock&) = delete;
  InstallLock& operator=(const InstallLock&) = delete;
  ~InstallLock();

 private:
  InstallLock(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  fs::path path_;
};

}  // namespace cudaenv::install
