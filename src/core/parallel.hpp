#pragma once
// A few threads working through a list of independent items (the archives of an install or of a
// mirror), each thread taking the next item as soon as it finishes one, so one large item never
// holds the others back. The first failure stops the run.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace cudaenv {

// The first failure among parallel workers wins; the others see failed() and stop early.
class FirstError {
 public:
  void set(Error error) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(error);
    failed_ = true;
  }
  bool failed() const { return failed_; }
  std::optional<Error> get() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  mutable std::mutex mutex_;
  std::optional<Error> error_;
  std::atomic<bool> failed_{false};
};

// Calls `work(index, first)` -> Status for every index in [0, count) on at most `workers`
// threads (at least one). Once an item fails no further item starts; items already running may
// poll `first.failed()` to stop early. Returns the first failure, or Ok when every item succeeded.
template <typename Work>
Status for_each_in_parallel(size_t count, int workers, Work&& work) {
  FirstError first;
  std::atomic<size_t> next_index{0};
  const auto worker = [&] {
    for (size_t i = next_index++; i < count && !first.failed(); i = next_index++) {
      if (auto status = work(i, static_cast<const FirstError&>(first)); !status) {
        first.set(status.error());
      }
    }
  };
  const auto threads = std::min(static_cast<size_t>(std::max(workers, 1)), count);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // out of threads: the ones started share the work
    }
  }
  if (pool.empty() && count > 0) worker();
  for (auto& thread : pool) thread.join();
  if (auto error = first.get()) return *error;
  return Ok{};
}

}  // namespace cudaenv
