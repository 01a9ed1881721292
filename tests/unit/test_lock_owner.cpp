// Who holds a store lock (install/lock_owner.*), and how a wait for it ends on a signal
// (install/lock.*, install/interrupt.*). Real processes and real signals.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <doctest/doctest.h>
#include <sys/wait.h>

#include "install/interrupt.hpp"
#include "install/lock.hpp"
#include "install/lock_owner.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::install;
namespace fs = std::filesystem;

namespace {

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// A child that sleeps until killed: a live pid that is not a lock's holder.
struct Sleeper {
  pid_t pid = ::fork();
  Sleeper() {
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~Sleeper() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

OwnerRecord record_of(long pid, long long started, const std::string& extra = {}) {
  const auto text = "host=" + hostname() + "\npid=" + std::to_string(pid) +
                    "\nstarted=" + std::to_string(started) + "\n" + extra;
  const auto file = fs::temp_directory_path() / ("cudaenv-owner-" + std::to_string(::getpid()));
  std::ofstream(file) << text;
  auto record = read_owner(file);
  fs::remove(file);
  REQUIRE(record.has_value());
  return *record;
}

}  // namespace

TEST_CASE("an owner file this process wrote names a live holder") {
  const auto now = std::time(nullptr);
  CHECK_FALSE(stale_reason(record_of(::getpid(), now, "boot=" + boot_id() + "\n"),
                           std::chrono::system_clock::now())
                  .has_value());
}

TEST_CASE("a live pid that started after its owner file was written is a reused pid") {
  const Sleeper sleeper;
  const auto written = std::time(nullptr) - 3600;
  const auto reason =
      stale_reason(record_of(sleeper.pid, written), std::chrono::system_clock::now());
  REQUIRE(reason.has_value());
  CHECK(reason->find("is now another process") != std::string::npos);
}

TEST_CASE("a live pid with other start ticks than its owner file recorded is a reused pid") {
  const Sleeper sleeper;
  const auto reason = stale_reason(record_of(sleeper.pid, std::time(nullptr), "start_ticks=1\n"),
                                   std::chrono::system_clock::now());
  REQUIRE(reason.has_value());
  CHECK(reason->find("is now another process") != std::string::npos);
}

TEST_CASE("an owner file of another boot of this host is stale") {
  const auto reason =
      stale_reason(record_of(::getpid(), std::time(nullptr), "boot=not-this-boot\n"),
                   std::chrono::system_clock::now());
  REQUIRE(reason.has_value());
  CHECK(reason->find("restarted") != std::string::npos);
}

TEST_CASE("a live pid that started before its owner file was written holds it") {
  const Sleeper sleeper;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto written = std::time(nullptr) + 5;  // well after the sleeper started
  CHECK_FALSE(stale_reason(record_of(sleeper.pid, written, "boot=" + boot_id() + "\n"),
                           std::chrono::system_clock::now())
                  .has_value());
}

TEST_CASE("SIGHUP ends a wait for a busy lock with exit 129, and guards nest") {
  const test::TempDir dir;
  const auto lock_file = dir.path() / ".lock-12.4.1";
  auto held = InstallLock::acquire(lock_file, {});
  REQUIRE(held.ok());
  const InterruptGuard outer;
  {
    const InterruptGuard inner;  // an inner guard forgets no signal and restores nothing early
    std::thread signaller([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(::getpid(), SIGHUP);
    });
    const auto started = std::chrono::steady_clock::now();
    auto waited = InstallLock::acquire(lock_file, {});
    signaller.join();
    REQUIRE_FALSE(waited.ok());
    CHECK(waited.error().kind == ErrorKind::hangup);
    CHECK(waited.error().message.find("interrupted by SIGHUP") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  }
  CHECK(InterruptGuard::caught() == SIGHUP);
  CHECK(stop_requested());
}
