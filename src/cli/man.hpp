#pragma once
// The manual page cudaenv(1), written as roff from the command table: every command with its
// arguments and flags, then the variables, files and exit codes of the command contract. The
// build runs the hidden `cudaenv man` to make share/man/man1/cudaenv.1.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/help_table.hpp"
#include "cli/outcome.hpp"

namespace cudaenv::cli {

std::string man_page(const std::vector<CommandEntry>& table, const std::string& version);

// The hidden `cudaenv man`.
void add_man_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
