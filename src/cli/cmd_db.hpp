#pragma once
// `cudaenv db` (the compatibility database in use) and `cudaenv db update`.

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/outcome.hpp"

namespace cudaenv::cli {

void add_db_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
