#pragma once
// Ctrl-C (SIGINT) and SIGTERM during an install. The handler only records the signal (an atomic
// store, async-signal-safe); the workers see it between chunks and while waiting on the network,
// stop, and the install removes its staging directory and releases its lock before the process
// exits with 128 + the signal.

#include <signal.h>

#include "core/error.hpp"

namespace cudaenv::install {

class InterruptGuard {
 public:
  // Catches SIGINT and SIGTERM, without SA_RESTART so that a blocking wait (a lock) returns
  // early; a signal the parent set to be ignored stays ignored.
  InterruptGuard();
  ~InterruptGuard();  // restores the previous handlers
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal caught while a guard was active; 0 for none.
  static int caught();

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// The error an interrupted install reports: exit 130 for SIGINT, 143 for SIGTERM.
Error interrupted_error(int signal, const std::string& what);

}  // namespace cudaenv::install
