#include "install/lock_owner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <mutex>
#include <thread>

#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "install/interrupt.hpp"
#include "install/writable.hpp"

namespace cudaenv::install {

namespace {

using Clock = std::chrono::system_clock;

// A crash between creating an owner file and writing it leaves it empty: stale soon.
constexpr std::chrono::seconds unreadable_grace{10};
// A takeover holds its breaker file for milliseconds; one this old was left by a crash.
constexpr std::chrono::seconds breaker_grace{60};
// An owner file without the holder's start ticks (written by hand, or by an older cudaenv) is
// compared in whole seconds: the boot time /proc/stat gives is rounded to one.
constexpr long long start_slack_seconds = 2;

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

std::optional<Clock::time_point> modified(const fs::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return std::nullopt;
  return Clock::from_time_t(info.st_mtime);
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// A file of /proc (they report a size of 0, so read_small_file refuses them), read to its end
// or 1 MiB: /proc/stat's interrupt counts alone take kilobytes on a large machine.
std::string read_proc_file(const char* path) {
  constexpr std::size_t limit = std::size_t{1} << 20;
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  std::string text;
  char buffer[8192];
  while (text.size() < limit) {
    const auto got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

std::string this_boot() {
  static const std::string boot(text::trim(read_proc_file("/proc/sys/kernel/random/boot_id")));
  return boot;
}

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. 0 when it
// cannot be read. The name (field 2) is in parentheses and may hold anything: count after it.
long long start_ticks_of(long pid) {
  const auto path = "/proc/" + std::to_string(pid) + "/stat";
  const auto stat = read_proc_file(path.c_str());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  const auto fields = text::split_whitespace(std::string_view(stat).substr(close + 1));
  constexpr std::size_t start_field = 22 - 3;  // fields after the name begin with field 3
  if (fields.size() <= start_field) return 0;
  return std::strtoll(fields[start_field].c_str(), nullptr, 10);
}

// When the host booted, seconds since the epoch (/proc/stat's btime); 0 when unknown.
long long boot_time() {
  const auto stat = read_proc_file("/proc/stat");
  for (const auto& line : text::split(stat, '\n'))
    if (text::starts_with(line, "btime ")) return std::strtoll(line.c_str() + 6, nullptr, 10);
  return 0;
}

std::string owner_text() {
  auto text = "host=" + this_host() + "\npid=" + std::to_string(::getpid()) +
              "\nstarted=" + std::to_string(static_cast<long long>(std::time(nullptr))) + "\n";
  if (!this_boot().empty()) text += "boot=" + this_boot() + "\n";
  if (const auto ticks = start_ticks_of(::getpid()); ticks > 0)
    text += "start_ticks=" + std::to_string(ticks) + "\n";
  return text;
}

// Why the live pid `record` names on this host is not its holder any more, or nullopt when it
// may be. Pids are reused: a process that started after the owner file was written is another.
std::optional<std::string> reused_pid_reason(const OwnerRecord& record) {
  if (!record.boot.empty() && !this_boot().empty() && record.boot != this_boot())
    return std::string("this host restarted since (another boot id)");
  const auto ticks = start_ticks_of(record.pid);
  if (ticks <= 0) return std::nullopt;  // unknown: a live pid is trusted
  const auto reused = "pid " + std::to_string(record.pid) +
                      " is now another process, started after the lock was taken";
  if (record.start_ticks > 0) {
    if (ticks != record.start_ticks) return reused;
    return std::nullopt;
  }
  const long long hz = ::sysconf(_SC_CLK_TCK);
  const long long booted = boot_time();
  if (hz <= 0 || booted <= 0 || record.started <= 0) return std::nullopt;  // nothing to compare
  if (booted + ticks / hz > record.started + start_slack_seconds) return reused;
  return std::nullopt;
}

// Removes the stale owner file whose content was `seen`, unless someone changed it meanwhile.
// A breaker file (O_EXCL too) makes the check and the removal one step among contenders.
bool take_over(const fs::path& file, const std::string& seen) {
  const auto breaker = fs::path(file.string() + ".break");
  UniqueFd fd(::open(breaker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) {
    const int open_error = errno;
    const auto since = modified(breaker);
    if (open_error == EEXIST && since && Clock::now() - *since > breaker_grace)
      ::unlink(breaker.c_str());
    return false;
  }
  (void)fd.close(breaker.string());  // empty: its name is all it says
  const auto current = read_owner(file);
  const bool removed = current && current->text == seen && ::unlink(file.c_str()) == 0;
  ::unlink(breaker.c_str());
  return removed;
}

std::string describe(const OwnerRecord& record, const fs::path& lock_file) {
  const std::time_t started = record.started;
  std::tm utc{};
  gmtime_r(&started, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return "the lock " + text::printable(lock_file.string(), text::message_limit) + " of pid " +
         std::to_string(record.pid) + " on host " + text::printable(record.host, 100) + " (since " +
         when + ")";
}

}  // namespace

fs::path owner_file(const fs::path& lock_file) {
  return lock_file.parent_path() / ("." + lock_file.filename().string() + ".owner");
}

std::optional<OwnerRecord> read_owner(const fs::path& file) {
  const auto text = read_small_file(file);
  if (!text) return std::nullopt;
  OwnerRecord record;
  record.text = *text;
  for (const auto& line : text::split(*text, '\n')) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const auto key = line.substr(0, eq);
    const auto value = line.substr(eq + 1);
    if (key == "host") record.host = value;
    if (key == "pid") record.pid = std::strtol(value.c_str(), nullptr, 10);
    if (key == "started") record.started = std::strtoll(value.c_str(), nullptr, 10);
    if (key == "boot") record.boot = value;
    if (key == "start_ticks") record.start_ticks = std::strtoll(value.c_str(), nullptr, 10);
  }
  return record;
}

std::optional<std::string> stale_reason(const OwnerRecord& record, Clock::time_point refreshed) {
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - refreshed);
  if (record.host.empty() || record.pid <= 0) {
    if (age > unreadable_grace) return std::string("it names no holder");
    return std::nullopt;
  }
  if (record.host == this_host()) {
    if (!process_alive(record.pid)) return std::string("that process is gone");
    return reused_pid_reason(record);
  }
  if (age > stale_after)
    return "that host has not refreshed it for " + std::to_string(age.count() / 60) + " minutes";
  return std::nullopt;
}

bool has_live_owner(const fs::path& lock_file) {
  const auto file = owner_file(lock_file);
  const auto record = read_owner(file);
  const auto since = modified(file);
  return record && since && !stale_reason(*record, *since);
}

struct OwnerClaim::Refresher {
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::thread thread;

  Refresher(fs::path file, std::string text)
      : thread([this, file = std::move(file), text = std::move(text)] {
          std::unique_lock lock(mutex);
          while (!wake.wait_for(lock, refresh_every, [this] { return stop; })) {
            const auto current = read_owner(file);
            if (current && current->text == text) ::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);
          }
        }) {}
  ~Refresher() {
    {
      const std::lock_guard lock(mutex);
      stop = true;
    }
    wake.notify_all();
    thread.join();
  }
  Refresher(const Refresher&) = delete;
  Refresher& operator=(const Refresher&) = delete;
};

Result<std::optional<OwnerClaim>> OwnerClaim::claim(
    const fs::path& lock_file, bool wait, const std::function<void()>& on_wait,
    const std::function<void(const std::string&)>& on_note) {
  const auto file = owner_file(lock_file);
  bool told = false;
  while (true) {
    const auto text = owner_text();
    UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd) {
      const bool written =
          ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
      const int write_error = errno;
      auto closed = fd.close(file.string());
      if (!written || !closed) {
        ::unlink(file.c_str());
        if (!written) return unwritable_error(file, write_error);
        return closed.error();
      }
      return std::optional<OwnerClaim>(OwnerClaim(file, text));
    }
    // A store this process cannot write needs no guard against our writes: whatever it tries
    // next fails on its own, naming what refused (flock still orders readers).
    if (errno == EACCES || errno == EROFS || errno == EPERM)
      return std::optional<OwnerClaim>(OwnerClaim({}, {}));
    if (errno != EEXIST) return unwritable_error(file, errno);
    const auto since = modified(file);
    if (!since) continue;  // released meanwhile: claim it
    const auto record = read_owner(file).value_or(OwnerRecord{});
    if (const auto reason = stale_reason(record, *since)) {
      if (take_over(file, record.text)) {
        if (on_note) on_note("took over " + describe(record, lock_file) + ": " + *reason);
        continue;
      }
    }
    if (!wait) return std::optional<OwnerClaim>{};
    if (on_wait && !told) on_wait();
    told = true;
    if (const int signal = InterruptGuard::caught())
      return interrupted_error(signal, "the wait for " + lock_file.string());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

OwnerClaim::OwnerClaim(fs::path file, std::string text)
    : file_(std::move(file)),
      text_(std::move(text)),
      refresher_(file_.empty() ? nullptr : std::make_unique<Refresher>(file_, text_)) {}

OwnerClaim::OwnerClaim(OwnerClaim&& other) noexcept
    : file_(std::move(other.file_)),
      text_(std::move(other.text_)),
      refresher_(std::move(other.refresher_)) {}

OwnerClaim::~OwnerClaim() {
  if (!refresher_) return;
  refresher_.reset();  // stops refreshing before the file goes
  const auto current = read_owner(file_);
  if (current && current->text == text_) ::unlink(file_.c_str());
}

}  // namespace cudaenv::install
