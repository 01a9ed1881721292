#pragma once
// How every long command ends on SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed):
// the same way, whichever it is doing — downloading, extracting, mirroring, waiting on another
// install's lock. While an InterruptGuard lives, the handler only records the signal (an atomic
// store, async-signal-safe) and stops the children cudaenv runs. Whatever waits or loops asks
// `stop_requested()` — between chunks, while a transfer waits on the network, every 100 ms of a
// lock wait — and returns `interrupted_error`; the command then removes its staging directory
// and owner file on the way out (their owners' destructors) and exits 128 + the signal: 130,
// 143 or 129. Outside a guard, the program's own handler (core/process.hpp) ends it as the signal
// would: short commands have nothing to clean up.

#include <signal.h>

#include <functional>
#include <string>

#include "core/error.hpp"

namespace cudaenv::install {

class InterruptGuard {
 public:
  // Catches SIGINT, SIGTERM and SIGHUP, without SA_RESTART so that a blocking call returns
  // early; a signal the parent set to be ignored stays ignored. Guards nest (a command holds
  // one, the install it runs another): only the outermost installs the handler and forgets an
  // earlier signal, so a signal caught before an inner guard is never lost.
  InterruptGuard();
  ~InterruptGuard();  // the outermost one restores the previous handlers and forgets the signal
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal caught while the guards now alive were; 0 for none.
  static int caught();

 private:
  bool outermost_ = false;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  struct sigaction previous_hup_ {};
};

// Whether a signal asked the running command to stop: the `should_stop` of every transfer.
bool stop_requested();

// The exit code a signal's error carries: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP).
ErrorKind interrupted_kind(int signal);

// "interrupted by SIGINT: <what> stopped[; <outcome>]", with the hint to run it again.
Error interrupted_error(int signal, const std::string& what, const std::string& outcome = {});

// Runs a whole long command under one guard: when a signal was caught and the command did not
// finish, the result is the signal's error (`<what> stopped`, exit 128 + the signal), whatever
// error the stopped step reported on its way out ("cancelled", "cannot lock").
Status run_interruptible(const std::string& what, const std::function<Status()>& command);

}  // namespace cudaenv::install
