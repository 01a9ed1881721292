#include "cli/man.hpp"

#include <string_view>

#include "core/text.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace cudaenv::cli {

namespace {

// Text as roff shows it literally: backslashes and hyphens escaped, and no line starting with
// a control character ('.' or '\'').
std::string roff(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string synopsis(const CommandEntry& command) {
  std::string line = "\\fBcudaenv " + roff(command.path) + "\\fR";
  if (!command.subcommands.empty()) line += " \\fICOMMAND\\fR";
  if (!command.flags.empty()) line += " [\\fIOPTIONS\\fR]";
  for (const auto& p : command.positionals) {
    const auto name = "\\fI" + roff(p.name) + "\\fR" + (p.repeats ? "..." : "");
    line += p.required ? " " + name : " [" + name + "]";
  }
  return line;
}

std::string flag_item(const FlagEntry& flag) {
  std::string names;
  for (const auto& name : flag.names) {
    if (!names.empty()) names += ", ";
    names += "\\fB" + roff(name) + "\\fR";
    if (!flag.value.empty()) names += " \\fI" + roff(flag.value) + "\\fR";
  }
  return ".TP\n" + names + "\n" + roff(flag.description) + "\n";
}

std::string command_section(const CommandEntry& command) {
  std::string out = ".SS \"cudaenv " + roff(command.path) + "\"\n" + synopsis(command) + "\n.br\n" +
                    roff(command.description) + "\n";
  for (const auto& p : command.positionals) {
    out += ".TP\n\\fI" + roff(p.name) + "\\fR\n" + roff(p.description) + "\n";
  }
  for (const auto& flag : command.flags) {
    if (flag.names.front() == "-h") continue;  // every command has --help
    out += flag_item(flag);
  }
  return out;
}

constexpr std::string_view description =
    R"ROFF(\fBcudaenv\fR installs CUDA toolkits (and cuDNN) side by side,
selects one per directory through a \fI.cudaenv\fR file and a shell prompt hook, checks what the
machine's driver and GPUs can run, and proves a toolkit works by compiling and running a kernel.
Results go to standard output; progress, notes and errors to standard error.
)ROFF";

// The contract that is not in the table: where things live and what exit codes mean.
constexpr std::string_view contract_sections = R"ROFF(.SH ENVIRONMENT
.TP
.B CUDAENV_ROOT
The data root: installed toolkits, cuDNN, caches and shims (default
\fI$XDG_DATA_HOME/cudaenv\fR, else \fI~/.local/share/cudaenv\fR).
.TP
.B CUDAENV_VERSION
The CUDA version to use, before any \fI.cudaenv\fR file or the global config.
.TP
.B CUDAENV_MIRROR
The mirror to download from (as \fB\-\-mirror\fR).
.TP
.B CUDAENV_SYSROOT
Probe a different root directory (containers, tests).
.TP
.B NO_COLOR
When set and not empty, no colour in the output.
.SH FILES
.TP
.I .cudaenv
The project file: the CUDA version (and cuDNN, framework pins) for a directory and those below.
.TP
.I ~/.config/cudaenv/config.toml
The global config (\fI$XDG_CONFIG_HOME/cudaenv/config.toml\fR when that is set).
.SH EXIT STATUS
.TP
.B 0
success
.TP
.B 1
failure
.TP
.B 2
usage error (an unknown command or flag, a bad value)
.TP
.B 3
not found (an unknown or uninstalled version)
.TP
.B 4
no compatible set
.TP
.B 5
network error
.TP
.B 6
integrity error (checksum, unsafe archive)
.TP
.B 7
verification failed
.SH SEE ALSO
\fBcudaenv help\fR \fICOMMAND\fR, \fBcudaenv completion\fR \fIbash|zsh|fish\fR
)ROFF";

}  // namespace

std::string man_page(const std::vector<CommandEntry>& table, const std::string& version) {
  const auto& root = table.front();
  std::string out = ".TH CUDAENV 1 \"\" \"cudaenv " + roff(version) + "\" \"User Commands\"\n";
  out +=
      ".SH NAME\ncudaenv \\- " + roff(root.description.substr(root.description.find(':') + 2)) +
      "\n.SH SYNOPSIS\n\\fBcudaenv\\fR [\\fB\\-\\-quiet\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...\n";
  out += ".SH DESCRIPTION\n" + std::string(description);
  out += ".SH OPTIONS\n";
  for (const auto& flag : root.flags) out += flag_item(flag);
  out += ".SH COMMANDS\n";
  for (size_t i = 1; i < table.size(); ++i) out += command_section(table[i]);
  return out + std::string(contract_sections);
}

void add_man_command(CLI::App& app, Context& context, Outcome& /*outcome*/) {
  auto* man = app.add_subcommand("man", "Print the manual page as roff (man -l <(cudaenv man))");
  man->group("");
  man->callback(
      [&app, &context] { context.out << man_page(command_table(app), CUDAENV_VERSION_STRING); });
}

}  // namespace cudaenv::cli
