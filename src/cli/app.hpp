#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/outcome.hpp"

namespace cudaenv::cli {

// Parses the command line, runs the chosen command and returns the process exit code. The one
// place where errors become "cudaenv: error: ..." lines.
int run_app(int argc, const char* const* argv, Context& context);

// The same, knowing only the fast activation commands: what the `cudaenv` front program runs.
int run_activation_app(int argc, const char* const* argv, Context& context);

// What both are made of: an app with the commands `add_commands` registers.
int run_commands(int argc, const char* const* argv, Context& context,
                 const std::function<void(CLI::App&, Outcome&)>& add_commands);

}  // namespace cudaenv::cli
