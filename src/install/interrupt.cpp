#include "install/interrupt.hpp"

#include <atomic>
#include <string>

#include "core/process.hpp"

namespace cudaenv::install {

namespace {

std::atomic<int> caught_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch lock-free state");

extern "C" void record_signal(int signal) {
  caught_signal.store(signal);
  terminate_running_children();  // none during an install today; never leave one behind
}

void catch_signal(int signal, struct sigaction& previous) {
  ::sigaction(signal, nullptr, &previous);
  if (previous.sa_handler == SIG_IGN) return;  // e.g. a background job started with SIGINT ignored
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocked flock() or read() returns EINTR
  ::sigaction(signal, &action, nullptr);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  caught_signal.store(0);
  catch_signal(SIGINT, previous_int_);
  catch_signal(SIGTERM, previous_term_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
}

int InterruptGuard::caught() { return caught_signal.load(); }

Error interrupted_error(int signal, const std::string& what) {
  const bool sigint = signal == SIGINT;
  return make_error(sigint ? ErrorKind::interrupted : ErrorKind::terminated,
                    std::string("interrupted by ") + (sigint ? "SIGINT" : "SIGTERM") + ": " + what +
                        " stopped; nothing was installed",
                    "run the command again: the downloads resume where they stopped");
}

}  // namespace cudaenv::install
