#pragma once
// Every child process cudaenv starts goes through a ProcessRunner, so that the environment a
// child sees is explicit and tests can point commands at fixture executables.

#include <chrono>
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
  std::chrono::milliseconds timeout{10000};
  // Written to the child's standard input, which is then closed; empty: /dev/null. Kept small
  // (a config file's lines): it is written whole before the output is read.
  std::string input = {};
};

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

// Starts real processes with posix_spawn, capturing stdout and stderr.
class SystemProcessRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const Command& command) override;
};

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
