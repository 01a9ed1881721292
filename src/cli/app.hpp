#pragma once

#include "cli/context.hpp"

namespace cudaenv::cli {

// Parses the command line, runs the chosen command and returns the process exit code. The one
// place where errors become "cudaenv: error: ..." lines.
int run_app(int argc, const char* const* argv, Context& context);

}  // namespace cudaenv::cli
