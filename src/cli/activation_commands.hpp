#pragma once
// The commands of daily use that must start fast (docs/design.md §5): `current`, `env`, `exec`,
// `which`, `init` and `hook-env`. They link nothing heavy, so the `cudaenv` front program runs
// them itself and hands every other command to the full program.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/outcome.hpp"

namespace cudaenv::cli {

struct CurrentOptions {
  bool json = false;
  bool explain = false;  // the rules that decided, one line each (CUDAENV_DEBUG=1 on stderr)
};
// Exit 0 with the version and its source; 3 when the selection is not installed.
Status run_current(const CurrentOptions& options, Context& context);

struct EnvOptions {
  std::string shell = "bash";  // bash, zsh, fish or json
  std::string target;          // --target NAME: a declared target's build settings instead
};
Status run_env(const EnvOptions& options, Context& context);

struct ExecOptions {
  std::string cuda;  // empty: the selection here
  std::vector<std::string> command;
};
// Returns only on failure: the command replaces cudaenv, so its exit status is the exit status.
Status run_exec(const ExecOptions& options, Context& context);

struct WhichOptions {
  std::string tool;
  bool host_compiler = false;  // --host-compiler: the compiler nvcc and CMake get here, and why
};
Status run_which(const WhichOptions& options, Context& context);

struct InitOptions {
  std::string shell;
};
Status run_init(const InitOptions& options, Context& context);

struct HookEnvOptions {
  std::string shell;
};
// Never fails on the user's files: a problem is one line on stderr, and the shell stays usable.
Status run_hook_env(const HookEnvOptions& options, Context& context);

void add_activation_commands(CLI::App& app, Context& context, Outcome& outcome);

// Whether argv names one of these commands (what the front program runs itself).
bool is_activation_command(int argc, const char* const* argv);

}  // namespace cudaenv::cli
