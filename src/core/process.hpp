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

}  // namespace cudaenv
