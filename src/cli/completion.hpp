#pragma once
// Shell completion generated from the command table: `cudaenv completion bash|zsh|fish` prints a
// script holding every command's subcommands and flags; versions are completed at TAB time by the
// hidden `cudaenv __complete versions|installed|cudnn`, which reads the store and the compiled-in
// database (never the network).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/help_table.hpp"
#include "cli/outcome.hpp"

namespace cudaenv::cli {

std::string bash_completion(const std::vector<CommandEntry>& table);
std::string zsh_completion(const std::vector<CommandEntry>& table);
std::string fish_completion(const std::vector<CommandEntry>& table);

// The flags a command's completion offers: its own and the global ones, each name once.
std::vector<FlagEntry> offered_flags(const std::vector<CommandEntry>& table,
                                     const CommandEntry& command);

// `cudaenv completion SHELL` and the hidden `cudaenv __complete KIND`.
void add_completion_commands(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
