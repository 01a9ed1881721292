#pragma once
// The part of a store lock that works across hosts (a store on NFS, where flock may lock only
// locally): an owner file beside the lock file, created with O_EXCL and holding the holder's
// host, pid and start time, and on Linux the boot id and the process's own start time (in clock
// ticks since boot, /proc/PID/stat). A holder refreshes the file's time while it lives, so another
// host can tell a live holder from a dead one. A stale owner file is taken over, and the taker
// says so: on this host when its process is gone, when the host restarted since (another boot
// id), or when its pid now names another process (one that started after the owner file was
// written: pids are reused); on another host when it was not refreshed for `stale_after`.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

// How long another host's owner file may go unrefreshed before it counts as stale.
constexpr std::chrono::seconds stale_after{300};
// How often a holder refreshes its owner file.
constexpr std::chrono::seconds refresh_every{30};

// <dir>/.<name>.owner for the lock file <dir>/<name>: a dot name, so no listing of the store
// mistakes it for an install, a download or a lock.
fs::path owner_file(const fs::path& lock_file);

struct OwnerRecord {
  std::string host;
  long pid = 0;
  long long started = 0;      // seconds since the epoch, when the file was written
  std::string text;           // the file's exact content: identifies one holder
  std::string boot = {};      // /proc/sys/kernel/random/boot_id; empty when not recorded
  long long start_ticks = 0;  // the holder's start, ticks since boot; 0 when not recorded
};

// The record in `file`, nullopt when there is none or it cannot be read.
std::optional<OwnerRecord> read_owner(const fs::path& file);
// Why `record` (last refreshed at `refreshed`) is stale, or nullopt while its holder may live.
std::optional<std::string> stale_reason(const OwnerRecord& record,
                                        std::chrono::system_clock::time_point refreshed);
// Whether `lock_file` has a live owner (an owner file that is not stale).
bool has_live_owner(const fs::path& lock_file);

// Our claim on a lock's owner file: refreshed by a thread while it lives, removed when released.
class OwnerClaim {
 public:
  // Creates the owner file. While a live holder owns it: nullopt when `wait` is false, else
  // waits (calling `on_wait` once; a signal ends the wait with its error, install/interrupt.hpp).
  // A stale one is removed (telling `on_note` why) and claimed.
  // Where this process may not create files (a store it cannot write), an empty claim.
  static Result<std::optional<OwnerClaim>> claim(
      const fs::path& lock_file, bool wait, const std::function<void()>& on_wait,
      const std::function<void(const std::string&)>& on_note);

  OwnerClaim(OwnerClaim&&) noexcept;
  OwnerClaim& operator=(OwnerClaim&&) = delete;
  OwnerClaim(const OwnerClaim&) = delete;
  OwnerClaim& operator=(const OwnerClaim&) = delete;
  ~OwnerClaim();

 private:
  struct Refresher;
  OwnerClaim(fs::path file, std::string text);
  fs::path file_;
  std::string text_;
  std::unique_ptr<Refresher> refresher_;
};

}  // namespace cudaenv::install
