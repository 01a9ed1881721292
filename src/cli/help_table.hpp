#pragma once
// The command table as plain data, read from the CLI11 app at run time: what the completion
// scripts and the man page are generated from, so a command added anywhere appears in both.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cudaenv::cli {

// What completes a value: "" nothing (free text, a URL), "versions" (installed and known CUDA
// releases), "installed" (installed toolkits only), "cudnn" (installed and known cuDNN
// releases), "words:a,b,c" (a fixed choice), "directories", "files", "programs" (a command
// line, as after `exec --`), "commands" (cudaenv's own commands, for `help`).
struct FlagEntry {
  std::vector<std::string> names;  // "--mirror", "-q"
  std::string value;               // the value's name ("SPEC", "N"); empty: takes no value
  std::string kind;
  std::string description;
};

struct PositionalEntry {
  std::string name;  // "SPEC"
  std::string kind;
  std::string description;
  bool repeats = false;
  bool required = false;
};

struct CommandEntry {
  std::string path;  // "" for cudaenv itself, "install", "mirror create"
  std::string description;
  std::vector<std::string> subcommands;  // the visible ones, in table order
  std::vector<FlagEntry> flags;          // its own (the root's are global)
  std::vector<PositionalEntry> positionals;
};

// Every visible command, the root first, each before its subcommands.
std::vector<CommandEntry> command_table(const CLI::App& root);

// Whether a name is one the generated shell code can carry without quoting surprises.
bool plain_name(const std::string& name);

}  // namespace cudaenv::cli
