// for_each_in_parallel, the worker pool behind installs and `mirror create`.

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/parallel.hpp"

using namespace cudaenv;

TEST_CASE("for_each_in_parallel runs every item exactly once") {
  for (int workers : {0, 1, 3, 64}) {
    std::vector<std::atomic<int>> runs(50);
    auto status = for_each_in_parallel(runs.size(), workers, [&](size_t i, const FirstError&) {
      ++runs[i];
      return Status(Ok{});
    });
    CHECK(status.ok());
    for (size_t i = 0; i < runs.size(); ++i) CHECK_MESSAGE(runs[i] == 1, "item " << i);
  }
  CHECK(for_each_in_parallel(0, 4, [](size_t, const FirstError&) {
          return Status(make_error(ErrorKind::failure, "never called"));
        }).ok());
}

TEST_CASE("for_each_in_parallel returns the first failure and starts nothing after it") {
  std::vector<size_t> started;
  auto status = for_each_in_parallel(10, 1, [&](size_t i, const FirstError&) -> Status {
    started.push_back(i);
    if (i == 3) return make_error(ErrorKind::integrity, "item 3 is corrupt");
    return Ok{};
  });
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().kind == ErrorKind::integrity);
  CHECK(status.error().message == "item 3 is corrupt");
  CHECK(started == std::vector<size_t>{0, 1, 2, 3});
}

TEST_CASE("for_each_in_parallel lets running items see another item's failure") {
  // Item 0 waits until item 1 has failed, as an archive download checks between chunks.
  std::atomic<bool> saw_failure{false};
  auto status = for_each_in_parallel(2, 2, [&](size_t i, const FirstError& first) -> Status {
    if (i == 1) return make_error(ErrorKind::network, "item 1 dropped");
    while (!first.failed()) std::this_thread::yield();
    saw_failure = true;
    return make_error(ErrorKind::failure, "stopped: another item failed");
  });
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == "item 1 dropped");
  CHECK(saw_failure);
}
