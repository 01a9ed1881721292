#pragma once
// Every child process cudaenv starts goes through a ProcessRunner, so that the environment a
// child sees is explicit and tests can point commands at fixture executables.

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace cudaenv {

struct Command {
  std::vector<std::string> argv;  // argv[0] is an absolute path or a name searched on PATH
  // The child's full environment; nullopt inherits cudaenv's own.
  std::optional<std::map<std::string, std::string>> environment;
  // On expiry the child's whole process group gets SIGTERM, then SIGKILL after a short grace.
  std::chrono::milliseconds timeout{10000};
  // Written to the child's standard input (then closed) while its output is read, so a child that
  // never reads cannot block us; empty: /dev/null. At most max_process_input bytes.
  std::string input = {};
  // A child that may prompt on the terminal (sudo asking for a password) stays in cudaenv's own
  // process group: a child in a background group that reads the terminal is stopped by SIGTTIN.
  // Its timeout then signals only the child itself.
  bool interactive = false;
};

// Larger input is refused before anything starts: input is a few lines of configuration.
inline constexpr std::size_t max_process_input = std::size_t{4} << 20;

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
  bool succeeded() const { return exit_code == 0 && !timed_out; }
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Fails only when the process could not be started; a non-zero exit is a ProcessResult.
  virtual Result<ProcessResult> run(const Command& command) = 0;
};

// Starts real processes with posix_spawn, each in its own process group, capturing stdout and
// stderr. A write to a child that has gone fails quietly: SIGPIPE is blocked in the calling thread
// while writing, whatever the program's own setting.
class SystemProcessRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const Command& command) override;
};

// Sends SIGTERM to the process group of every child a SystemProcessRunner is waiting on (those not
// `interactive`). Async-signal-safe: a program's SIGINT/SIGTERM handler calls it, because Ctrl-C
// reaches only the terminal's foreground group, cudaenv's, not the groups its children lead.
void terminate_running_children() noexcept;

// Called once at the start of each program: a write to a closed pipe or socket then fails with
// EPIPE instead of killing the program. Children (run() and replace_process) get the default back.
void ignore_broken_pipe_signal();

// Called once at the start of a program that runs children: SIGINT, SIGTERM and SIGHUP first stop
// every running child's process group (terminate_running_children), then end the program as the
// signal would have. Signals the parent set to be ignored stay ignored.
void stop_children_on_interrupt();

// The first executable regular file called `name` in the ':'-separated `search_path` (an empty
// entry is the current directory), skipping the directories in `skip`; nullopt when none.
std::optional<std::string> find_in_path(const std::string& name, const std::string& search_path,
                                        const std::vector<std::string>& skip = {});

// Replaces this process with `argv` (argv[0] a path, or a name looked up on the PATH of
// `environment`), running with exactly `environment`. Returns only on failure: ErrorKind::not_found
// when there is no such program, ErrorKind::failure when it cannot be run.
Error replace_process(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& environment);

}  // namespace cudaenv
