// for_each_in_parallel, the worker pool behind installs and `mirror create`.

#include <atomic>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/parallel.hpp"

using namespace cudaenv;

TEST_CASE("for_each_in_parallel runs every item exactly once") {
  for (int workers : {0, 1, 3, 64}) {
    std::vector<std::atomic<int>> runs(50);
    auto status =
        for_each_in_parallel(runs.size(), workers, "counting", [&](size_t i, const FirstError&) {
          ++runs[i];
          return Status(Ok{});
        });
    CHECK(status.ok());
    for (size_t i = 0; i < runs.size(); ++i) CHECK_MESSAGE(runs[i] == 1, "item " << i);
  }
  CHECK(for_each_in_parallel(0, 4, "nothing", [](size_t, const FirstError&) {
          return Status(make_error(ErrorKind::failure, "never called"));
        }).ok());
}

TEST_CASE("for_each_in_parallel returns the first failure and starts nothing after it") {
  std::vector<size_t> started;
  auto status =
      for_each_in_parallel(10, 1, "checking items", [&](size_t i, const FirstError&) -> Status {
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
  auto status =
      for_each_in_parallel(2, 2, "waiting", [&](size_t i, const FirstError& first) -> Status {
        if (i == 1) return make_error(ErrorKind::network, "item 1 dropped");
        while (!first.failed()) std::this_thread::yield();
        saw_failure = true;
        return make_error(ErrorKind::failure, "stopped: another item failed");
      });
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == "item 1 dropped");
  CHECK(saw_failure);
}

TEST_CASE("an exception in a worker becomes the run's error, never std::terminate") {
  // Each worker thread throws: before, the exception left the thread's function and ended the
  // process; now the caller gets an error naming what the items were doing.
  for (int workers : {1, 4}) {
    CAPTURE(workers);
    auto out_of_memory = for_each_in_parallel(8, workers, "unpacking the archives",
                                              [](size_t i, const FirstError&) -> Status {
                                                if (i == 2) throw std::bad_alloc();
                                                return Ok{};
                                              });
    REQUIRE_FALSE(out_of_memory.ok());
    CHECK(out_of_memory.error().kind == ErrorKind::failure);
    CHECK(out_of_memory.error().message == "out of memory while unpacking the archives");
    CHECK(out_of_memory.error().hint.find("--jobs") != std::string::npos);

    auto thrown = for_each_in_parallel(8, workers, "reading the index",
                                       [](size_t i, const FirstError&) -> Status {
                                         if (i == 5) throw std::runtime_error("bad value");
                                         return Ok{};
                                       });
    REQUIRE_FALSE(thrown.ok());
    CHECK(thrown.error().message == "unexpected failure while reading the index: bad value");

    auto odd = for_each_in_parallel(3, workers, "odd work",
                                    [](size_t, const FirstError&) -> Status { throw 42; });
    REQUIRE_FALSE(odd.ok());
    CHECK(odd.error().message == "unexpected failure while odd work");
  }
}

TEST_CASE("running out of memory while reporting an error still reports it") {
  FirstError first;
  first.set_out_of_memory();
  CHECK(first.failed());
  const auto error = first.get("copying the archives");
  REQUIRE(error.has_value());
  CHECK(error->message == "out of memory while copying the archives");
}
