#pragma once
// The command table: each command registers its flags on the CLI11 app and runs through a
// run_<verb>(options, context) function that tests can call without CLI11.

#include <CLI/CLI.hpp>

#include "cli/context.hpp"

namespace cudaenv::cli {

// Set by the chosen command's callback; the exit code of the process.
struct Outcome {
  int exit_code = 0;
};

struct InfoOptions {
  bool json = false;
};
int run_info(const InfoOptions& options, Context& context);
void add_info_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
