#pragma once
// The command table: each command registers its flags on the CLI11 app and runs through a
// run_<verb>(options, context) function that tests can call without CLI11.

#include <CLI/CLI.hpp>

#include "cli/context.hpp"

namespace cudaenv::cli {

// Set by the chosen command's callback: an error to report, or the exit code of the process.
struct Outcome {
  int exit_code = 0;
  Status status = Ok{};
};

struct InfoOptions {
  bool json = false;
};
int run_info(const InfoOptions& options, Context& context);
void add_info_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli

namespace cudaenv::cli {

struct ResolveOptions {
  std::string cuda, cudnn, torch, tensorflow, jax;
  std::string driver, gcc;
  std::vector<std::string> arch;
  bool no_detect = false;
  bool json = false;
  bool verbose = false;
};
// Exit code 0 with a set, 4 when nothing fits (in outcome); errors for bad flags and unknown
// versions.
Status run_resolve(const ResolveOptions& options, Context& context, Outcome& outcome);
void add_resolve_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli

namespace cudaenv::cli {

struct VerifyOptions {
  std::string spec;  // empty: the active toolkit, else the system's
  std::string cudnn;
  std::vector<std::string> only_arch;  // diagnostic: deliberately wrong builds
  bool no_ptx = false;
  bool torch = false, tensorflow = false, jax = false;
  bool json = false;
};
// Exit code 0 when the toolkit is proven, 7 with the cause when not (in outcome); errors for bad
// flags (2) and a SPEC that is not installed (3).
Status run_verify(const VerifyOptions& options, Context& context, Outcome& outcome);
void add_verify_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
