#pragma once
// Help read from the CLI11 command table: "did you mean" for a mistyped command or flag, the short
// command list `cudaenv` alone prints, and `cudaenv help [COMMAND]`. Everything is looked up in
// the table at run time, so a command added anywhere appears here without a list to keep.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/outcome.hpp"

namespace cudaenv::cli {

// Edits between two words, an adjacent swap counting as one ("mirorr" is one from "mirror").
size_t edit_distance(std::string_view a, std::string_view b);

// The names closest to a mistyped `word`, when close enough to be what was meant (at most a
// third of the word's length away, and at least one edit allowed); empty when none is.
std::vector<std::string> nearest_names(std::string_view word,
                                       const std::vector<std::string>& names);

// The subcommands a user sees (hidden ones, in the empty group, left out), in table order.
std::vector<const CLI::App*> visible_commands(const CLI::App& app);

// "cudaenv mirror create" for that command; "cudaenv" for the root.
std::string command_path(const CLI::App& app);

// The help text `cudaenv PATH --help` prints, whatever was parsed.
std::string command_help(const CLI::App& command);

// What `cudaenv` with no arguments prints: what it is and the commands, one line each.
std::string short_help(const CLI::App& root);

// A usage mistake found by reading the arguments against the table: an unknown command or
// flag (with the nearest names), or a command that needs a subcommand.
struct UsageProblem {
  std::string message;
  std::string hint;
};
std::optional<UsageProblem> diagnose_arguments(const CLI::App& root, int argc,
                                               const char* const* argv);

// The command `words` name below `root` ("mirror", "create"), or the problem with the first
// word that names none.
struct FoundCommand {
  const CLI::App* command = nullptr;
  std::optional<UsageProblem> problem;
};
FoundCommand find_command(const CLI::App& root, const std::vector<std::string>& words);

// `cudaenv help [COMMAND...]`.
void add_help_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
