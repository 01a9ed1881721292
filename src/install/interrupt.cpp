#include "install/interrupt.hpp"

#include <atomic>
#include <string>

#include "core/process.hpp"

namespace cudaenv::install {

namespace {

std::atomic<int> caught_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch lock-free state");
// Guards alive now; constructed and destroyed on the main thread, read by workers.
std::atomic<int> guard_depth{0};

extern "C" void record_signal(int signal) {
  caught_signal.store(signal);
  terminate_running_children();  // they lead their own groups: the terminal's signal missed them
}

void catch_signal(int signal, struct sigaction& previous) {
  ::sigaction(signal, nullptr, &previous);
  if (previous.sa_handler == SIG_IGN) return;  // e.g. a background job started with SIGINT ignored
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocked read() or poll() returns EINTR
  ::sigaction(signal, &action, nullptr);
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace

InterruptGuard::InterruptGuard() : outermost_(guard_depth.fetch_add(1) == 0) {
  if (!outermost_) return;
  caught_signal.store(0);
  catch_signal(SIGINT, previous_int_);
  catch_signal(SIGTERM, previous_term_);
  catch_signal(SIGHUP, previous_hup_);
}

InterruptGuard::~InterruptGuard() {
  guard_depth.fetch_sub(1);
  if (!outermost_) return;
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
  ::sigaction(SIGHUP, &previous_hup_, nullptr);
  caught_signal.store(0);  // the command it guarded is over: nothing is pending for the next
}

int InterruptGuard::caught() { return caught_signal.load(); }

bool stop_requested() { return caught_signal.load() != 0; }

ErrorKind interrupted_kind(int signal) {
  switch (signal) {
    case SIGINT: return ErrorKind::interrupted;
    case SIGHUP: return ErrorKind::hangup;
    default: return ErrorKind::terminated;
  }
}

Error interrupted_error(int signal, const std::string& what, const std::string& outcome) {
  return make_error(interrupted_kind(signal),
                    std::string("interrupted by ") + signal_name(signal) + ": " + what +
                        " stopped" + (outcome.empty() ? "" : "; " + outcome),
                    "run the command again: what was complete stays, and the downloads resume "
                    "where they stopped");
}

Status run_interruptible(const std::string& what, const std::function<Status()>& command) {
  const InterruptGuard guard;
  auto status = command();
  const int signal = InterruptGuard::caught();
  if (signal == 0 || status) return status;
  if (status.error().kind == interrupted_kind(signal)) return status;  // said so already
  return interrupted_error(signal, what);
}

}  // namespace cudaenv::install
