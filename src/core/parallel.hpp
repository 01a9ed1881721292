#pragma once
// A few threads working through a list of independent items (the archives of an install or of a
// mirror), each thread taking the next item as soon as it finishes one, so one large item never
// holds the others back. The first failure stops the run.
//
// No exception leaves a worker: one escaping a thread's function would end the process through
// std::terminate. Each item runs inside a catch-all that turns std::bad_alloc into "out of memory
// while <what>" and anything else into an error naming it, both exit 1 (ErrorKind::failure);
// the caller gets it as the run's failure, in its own thread.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>
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
  // When even the error could not be made (memory ran out while making it): only a flag, which
  // needs no memory; get() makes the error later, once the workers are gone.
  void set_out_of_memory() noexcept {
    out_of_memory_ = true;
    failed_ = true;
  }
  bool failed() const { return failed_; }
  std::optional<Error> get(const std::string& what) const {
    std::lock_guard lock(mutex_);
    if (error_) return error_;
    if (out_of_memory_) return out_of_memory(what);
    return std::nullopt;
  }

  static Error out_of_memory(const std::string& what) {
    return make_error(ErrorKind::failure, "out of memory while " + what,
                      "free memory (or raise the limit set by ulimit -v), or run fewer jobs "
                      "at once (--jobs), then run the command again");
  }

 private:
  mutable std::mutex mutex_;
  std::optional<Error> error_;
  std::atomic<bool> failed_{false};
  std::atomic<bool> out_of_memory_{false};
};

namespace detail {

// Runs one item, recording its failure or whatever it threw; never throws.
template <typename Work>
void run_item(Work& work, size_t index, FirstError& first, const std::string& what) noexcept {
  try {
    try {
      if (auto status = work(index, static_cast<const FirstError&>(first)); !status)
        first.set(status.error());
    } catch (const std::bad_alloc&) {
      first.set(FirstError::out_of_memory(what));
    } catch (const std::exception& error) {
      first.set(make_error(ErrorKind::failure,
                           "unexpected failure while " + what + ": " + std::string(error.what())));
    } catch (...) {
      first.set(make_error(ErrorKind::failure, "unexpected failure while " + what));
    }
  } catch (...) {
    first.set_out_of_memory();  // making or storing the error failed: memory ran out
  }
}

}  // namespace detail

// Calls `work(index, first)` -> Status for every index in [0, count) on at most `workers`
// threads (at least one). Once an item fails no further item starts; items already running may
// poll `first.failed()` to stop early. Returns the first failure, or Ok when every item succeeded.
// `what` says what the items are doing, for errors: "installing the archives".
template <typename Work>
Status for_each_in_parallel(size_t count, int workers, const std::string& what, Work&& work) {
  FirstError first;
  std::atomic<size_t> next_index{0};
  const auto worker = [&]() noexcept {
    for (size_t i = next_index++; i < count && !first.failed(); i = next_index++)
      detail::run_item(work, i, first, what);
  };
  const auto threads = std::min(static_cast<size_t>(std::max(workers, 1)), count);
  std::vector<std::thread> pool;
  try {
    pool.reserve(threads);
    for (size_t i = 0; i < threads; ++i) pool.emplace_back(worker);
  } catch (const std::system_error&) {
    // out of threads: the ones started share the work
  } catch (const std::bad_alloc&) {
    // likewise: no memory for another thread's stack or the pool itself
  }
  if (pool.empty() && count > 0) worker();
  for (auto& thread : pool) thread.join();
  if (auto error = first.get(what)) return *error;
  return Ok{};
}

}  // namespace cudaenv
