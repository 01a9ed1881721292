// The store's locks when lock files may be deleted, and what `cudaenv cache prune` decides is
// unneeded, on real directories.

#include <chrono>
#include <future>

#include <doctest/doctest.h>

#include "install/cache.hpp"
#include "install/lock.hpp"
#include "install/uninstall.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::install;

TEST_CASE("a lock taken on a lock file deleted while waiting is taken again on the new file") {
  test::TempDir dir;
  const auto path = dir.path() / ".lock-12.4.1";
  auto first = InstallLock::acquire(path, {});
  REQUIRE(first.ok());
  std::promise<void> waiting;
  auto waited = waiting.get_future();
  auto second = std::async(
      std::launch::async, [&] { return InstallLock::acquire(path, [&] { waiting.set_value(); }); });
  REQUIRE(waited.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  std::move(*first).remove_file();  // what prune does: unlink while holding, then release
  REQUIRE(second.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  auto held = second.get();
  REQUIRE(held.ok());
  // The waiter holds the file now at the path, so nobody else can take it.
  CHECK(fs::exists(path));
  CHECK(InstallLock::is_held(path));
  auto third = InstallLock::try_acquire(path);
  REQUIRE(third.ok());
  CHECK_FALSE(third->has_value());
}

TEST_CASE("is_held creates nothing and try_acquire never waits") {
  test::TempDir dir;
  const auto path = dir.path() / "archive.tar.xz.lock";
  CHECK_FALSE(InstallLock::is_held(path));
  CHECK_FALSE(fs::exists(path));
  auto lock = InstallLock::try_acquire(path);
  REQUIRE(lock.ok());
  REQUIRE(lock->has_value());
  CHECK(InstallLock::is_held(path));
}

TEST_CASE("prune keeps what installed versions need and what a running install holds") {
  test::TempDir dir;
  const Store store{dir.path()};
  test::write_file(store.toolkits() / "12.4.1" / "cudaenv-receipt.json",
                   R"({"product": "cuda", "version": "12.4.1", "components": [
                       {"name": "cuda_nvcc", "url": "http://m/cuda/redist/cuda_nvcc/a.tar.xz"}]})");
  test::write_file(store.downloads() / "a.tar.xz", "needed");
  test::write_file(store.downloads() / "b.tar.xz", "of a version no longer installed");
  test::write_file(store.downloads() / "c.tar.xz", "being written");
  test::write_file(store.toolkits() / ".staging-12.8.0-77" / "bin" / "nvcc", "half");
  test::write_file(store.toolkits() / ".staging-12.9.0-78" / "bin" / "nvcc", "dead");
  auto writing = InstallLock::acquire(download_lock_file(store.downloads() / "c.tar.xz"), {});
  auto installing = InstallLock::acquire(store.toolkits() / ".lock-12.8.0", {});
  REQUIRE((writing.ok() && installing.ok()));

  const auto cleanup = prune_cache(store);
  CHECK(cleanup.failures.empty());
  CHECK(fs::exists(store.downloads() / "a.tar.xz"));
  CHECK_FALSE(fs::exists(store.downloads() / "b.tar.xz"));
  CHECK(fs::exists(store.downloads() / "c.tar.xz"));
  CHECK(fs::exists(store.toolkits() / ".staging-12.8.0-77"));
  CHECK_FALSE(fs::exists(store.toolkits() / ".staging-12.9.0-78"));
  CHECK_FALSE(fs::exists(store.toolkits() / ".lock-12.9.0"));
  CHECK(fs::exists(store.toolkits() / "12.4.1"));
  CHECK(cleanup.in_use.size() == 2);
}

TEST_CASE("an unreadable receipt keeps every download") {
  test::TempDir dir;
  const Store store{dir.path()};
  test::write_file(store.toolkits() / "12.4.1" / "cudaenv-receipt.json", "{not json");
  test::write_file(store.downloads() / "b.tar.xz", "unknown owner");
  const auto survey = survey_cache(store);
  REQUIRE(survey.downloads_kept_because.has_value());
  CHECK(survey.downloads_kept_because->find("12.4.1") != std::string::npos);
  prune_cache(store);
  CHECK(fs::exists(store.downloads() / "b.tar.xz"));
}
