// The plan as a shell script: what `cudaenv bootstrap --dry-run` prints.

#include <algorithm>
#include <sstream>
#include <string_view>

#include "core/text.hpp"
#include "doctor/bootstrap_plan.hpp"

namespace cudaenv::doctor {

namespace {

// Values reach the script from the machine (os-release, the kernel's release, package names,
// $HOME): text that may hold a newline, which inside a `# comment` would start a command, or an
// escape sequence for the terminal the script is shown on. A comment shows them escaped.
std::string comment_text(std::string_view text) {
  return text::printable(text, text::message_limit);
}

// Whether `word` prints as itself: no control character, valid UTF-8 (what printable keeps).
bool shows_as_is(std::string_view word) { return text::printable(word, word.size() + 1) == word; }

bool holds_only_printable_words(const StepCommand& command) {
  const auto printable = [](const std::string& word) { return shows_as_is(word); };
  const auto input = text::lines(command.input);  // each line becomes one printf argument
  return std::all_of(command.argv.begin(), command.argv.end(), printable) &&
         std::all_of(command.environment.begin(), command.environment.end(), printable) &&
         std::all_of(input.begin(), input.end(), printable);
}

// NAME=value, the value quoted: sh reads the assignment back unchanged.
std::string assignment(const std::string& variable) {
  const auto equals = variable.find('=');
  if (equals == std::string::npos) return text::shell_quote(variable);
  return variable.substr(0, equals + 1) + text::shell_quote(variable.substr(equals + 1));
}

std::string command_line(const StepCommand& command, bool as_root) {
  std::string line;
  if (!command.input.empty()) {
    line = "printf '%s\\n' " + text::shell_join(text::lines(command.input)) + " | ";
  }
  // Root runs the environment as a prefix of the command; sudo takes it as arguments.
  if (as_root || !command.privileged) {
    for (const auto& variable : command.environment) line += assignment(variable) + " ";
  }
  line += text::shell_join(effective_argv(command, as_root));
  if (!command.input.empty()) line += " > /dev/null";
  return line;
}

// A command whose words cannot be shown as they are is not written as one: the script names it
// escaped in a comment and stops there, so it never runs something other than what it shows.
std::string script_lines(const StepCommand& command, bool as_root, const std::string& prefix) {
  if (holds_only_printable_words(command)) return prefix + command_line(command, as_root) + "\n";
  return prefix + "# not run: a value holds control characters: " +
         comment_text(text::shell_join(command.argv)) + "\n" + prefix + "exit 1\n";
}

}  // namespace

std::string render_script(const Plan& plan, bool as_root) {
  std::ostringstream out;
  out << "#!/bin/sh\n# cudaenv bootstrap plan for " << comment_text(plan.os) << "\n";
  for (const auto& note : plan.notes) out << "# " << comment_text(note) << "\n";
  out << "# Reboot needed: " << (plan.reboot_needed ? "yes" : "no") << "\nset -e\n";
  bool rebooted = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const auto& step = plan.steps[i];
    if (step.after_reboot && plan.reboot_needed && !rebooted) {
      out << "\n# Reboot now so the driver loads (sudo reboot); after it, run the rest by hand:\n";
      rebooted = true;
    }
    const auto prefix = rebooted ? std::string("# ") : std::string();
    out << "\n# [" << i + 1 << "/" << plan.steps.size() << "] " << comment_text(step.id) << ": "
        << comment_text(step.description) << (step.privileged ? " (as root)" : "") << "\n";
    if (const auto done = describe(step.done_check); !done.empty())
      out << "#   already done when " << comment_text(done) << "\n";
    for (const auto& command : step.commands) out << script_lines(command, as_root, prefix);
  }
  return out.str();
}

}  // namespace cudaenv::doctor
