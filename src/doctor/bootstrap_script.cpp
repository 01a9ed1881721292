// The plan as a shell script: what `cudaenv bootstrap --dry-run` prints.

#include <sstream>

#include "core/text.hpp"
#include "doctor/bootstrap_plan.hpp"

namespace cudaenv::doctor {

namespace {

std::string command_line(const StepCommand& command, bool as_root) {
  std::string line;
  if (!command.input.empty()) {
    line = "printf '%s\\n' " + text::shell_join(text::lines(command.input)) + " | ";
  }
  // Root runs the environment as a prefix of the command; sudo takes it as arguments.
  if (as_root || !command.privileged) {
    for (const auto& variable : command.environment) line += variable + " ";
  }
  line += text::shell_join(effective_argv(command, as_root));
  if (!command.input.empty()) line += " > /dev/null";
  return line;
}

}  // namespace

std::string render_script(const Plan& plan, bool as_root) {
  std::ostringstream out;
  out << "#!/bin/sh\n# cudaenv bootstrap plan for " << plan.os << "\n";
  for (const auto& note : plan.notes) out << "# " << note << "\n";
  out << "# Reboot needed: " << (plan.reboot_needed ? "yes" : "no") << "\nset -e\n";
  bool rebooted = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const auto& step = plan.steps[i];
    if (step.after_reboot && plan.reboot_needed && !rebooted) {
      out << "\n# Reboot now so the driver loads (sudo reboot); after it, run the rest by hand:\n";
      rebooted = true;
    }
    const auto prefix = rebooted ? std::string("# ") : std::string();
    out << "\n# [" << i + 1 << "/" << plan.steps.size() << "] " << step.id << ": "
        << step.description << (step.privileged ? " (as root)" : "") << "\n";
    if (const auto done = describe(step.done_check); !done.empty())
      out << "#   already done when " << done << "\n";
    for (const auto& command : step.commands)
      out << prefix << command_line(command, as_root) << "\n";
  }
  return out.str();
}

}  // namespace cudaenv::doctor
