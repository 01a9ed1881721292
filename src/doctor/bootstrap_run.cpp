#include "doctor/bootstrap_run.hpp"

#include <unistd.h>

#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "doctor/bootstrap_state.hpp"
#include "probe/toolkits.hpp"

namespace cudaenv::doctor {

namespace fs = std::filesystem;

namespace {

// Package installs download hundreds of megabytes; a toolkit install more.
constexpr auto command_timeout = std::chrono::hours(2);

struct Runner {
  const Plan& plan;
  const RunSetup& setup;
  const RunCallbacks& callbacks;
  BootstrapState state;
  fs::path log_file;

  void progress(const std::string& line) const {
    if (callbacks.progress) callbacks.progress(line);
  }

  void log(const std::string& text) const {
    // The log is a record for the user: a step never fails because it could not be kept.
    (void)append_to_file(log_file, text::ends_with(text, "\n") ? text : text + "\n");
  }

  // argv[0] looked up in the environment's PATH, so stand-ins placed first on PATH are the ones
  // run; the child inherits that environment plus the command's own variables.
  Command command_for(const StepCommand& step_command) const {
    auto argv = effective_argv(step_command, setup.as_root);
    for (const auto& directory : text::split(setup.env.get("PATH").value_or(""), ':')) {
      const auto candidate = directory + "/" + argv[0];
      if (argv[0].find('/') == std::string::npos && !directory.empty() &&
          ::access(candidate.c_str(), X_OK) == 0) {
        argv[0] = candidate;
        break;
      }
    }
    auto environment = setup.env.variables();
    for (const auto& variable : step_command.environment) {
      const auto equals = variable.find('=');
      environment[variable.substr(0, equals)] = variable.substr(equals + 1);
    }
    // sudo may ask for a password on the terminal, which it can only do in our process group.
    const bool through_sudo = step_command.privileged && !setup.as_root;
    return Command{argv, environment, command_timeout, step_command.input, through_sudo};
  }

  bool already_done(const Step& step) const {
    const auto& check = step.done_check;
    const auto installed =
        probe::parse_dpkg_status(setup.sysroot.read_file("/var/lib/dpkg/status").value_or(""));
    switch (check.kind) {
      case DoneKind::never: return false;
      case DoneKind::packages_installed:
        return std::all_of(check.names.begin(), check.names.end(),
                           [&](const std::string& name) { return installed.count(name) > 0; });
      case DoneKind::any_package:
        return std::any_of(installed.begin(), installed.end(), [&](const auto& package) {
          return std::any_of(
              check.names.begin(), check.names.end(),
              [&](const std::string& prefix) { return text::starts_with(package.first, prefix); });
        });
      case DoneKind::file_contains: {
        const auto content = Sysroot().read_file(check.path).value_or("");
        const auto lines = text::lines(content);
        return std::find(lines.begin(), lines.end(), check.text) != lines.end();
      }
      case DoneKind::toolkit_installed: return toolkit_installed(check.text);
    }
    return false;
  }

  bool toolkit_installed(const std::string& spec_text) const {
    const auto spec = VersionSpec::parse(spec_text);
    if (!spec) return false;
    for (const auto& name : Sysroot().list_directory((setup.data_root / "toolkits").string())) {
      const auto version = Version::parse(name);
      if (version && spec->matches(*version)) return true;
    }
    return false;
  }

  Status run_step(const Step& step) {
    for (const auto& step_command : step.commands) {
      const auto command = command_for(step_command);
      const auto shown = text::shell_join(effective_argv(step_command, setup.as_root));
      progress("  $ " + shown);
      log("$ " + shown);
      auto result = setup.runner.run(command);
      if (!result) {
        log(result.error().message);
        return make_error(ErrorKind::failure, "step " + step.id + ": " + result.error().message,
                          step.fix);
      }
      log(result->out + result->err + "exit " + std::to_string(result->exit_code));
      if (!result->succeeded()) {
        const auto lines = text::lines(result->err.empty() ? result->out : result->err);
        return make_error(ErrorKind::failure,
                          "step " + step.id + " failed: " + shown + " exited " +
                              std::to_string(result->exit_code) +
                              (lines.empty() ? "" : " (" + lines.back() + ")"),
                          step.fix + "; then run `cudaenv bootstrap` again to continue");
      }
    }
    return Ok{};
  }

  std::string boot_id() const {
    return std::string(
        text::trim(setup.sysroot.read_file("/proc/sys/kernel/random/boot_id").value_or("")));
  }

  // A reboot happened when the boot id changed. Where no boot id can be read there is no way to
  // tell, and a run that could never continue would be worse than one that trusts the user.
  void forget_finished_reboot() {
    if (!state.reboot) return;
    const auto now = boot_id();
    if (now.empty() || now != state.reboot->boot_id) {
      progress("reboot after step " + state.reboot->after + " has happened: continuing");
      state.reboot.reset();
    }
  }

  Result<RunSummary> run() {
    RunSummary summary;
    forget_finished_reboot();
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      const auto label = "[" + std::to_string(i + 1) + "/" + std::to_string(plan.steps.size()) +
                         "] " + step.id + ": " + step.description;
      if (state.is_completed(step.id) || already_done(step)) {
        progress(label + " (already done)");
        ++summary.steps_skipped;
        if (!state.is_completed(step.id)) state.completed.push_back(step.id);
        continue;
      }
      if (step.after_reboot && state.reboot) {
        progress("reboot needed before " + step.id +
                 ": run `sudo reboot`, then `cudaenv bootstrap` again");
        summary.end = RunEnd::waiting_for_reboot;
        break;
      }
      if (step.privileged && !setup.assume_yes && !(callbacks.confirm && callbacks.confirm(step))) {
        if (auto saved = save(); !saved) return saved.error();
        return make_error(ErrorKind::failure, "step " + step.id + " not confirmed: stopped",
                          "run `cudaenv bootstrap --yes` to run privileged steps without asking");
      }
      progress(label);
      log("# " + label);
      auto status = run_step(step);
      if (!status) {
        if (auto saved = save(); !saved) return saved.error();
        return status.error();
      }
      ++summary.steps_run;
      state.completed.push_back(step.id);
      if (step.reboot_after && !state.reboot) state.reboot = PendingReboot{step.id, boot_id()};
      if (auto saved = save(); !saved) return saved.error();
    }
    if (auto saved = save(); !saved) return saved.error();
    if (summary.end == RunEnd::finished && state.reboot) summary.end = RunEnd::waiting_for_reboot;
    return summary;
  }

  Status save() const { return save_state(state_file(setup.data_root), state); }
};

}  // namespace

fs::path state_file(const fs::path& data_root) { return data_root / "bootstrap" / "state.json"; }

Result<RunSummary> run_plan(const Plan& plan, const RunSetup& setup,
                            const RunCallbacks& callbacks) {
  auto state = load_state(state_file(setup.data_root));
  if (!state) return state.error();
  std::error_code ec;
  fs::create_directories(setup.data_root / "bootstrap", ec);
  Runner runner{plan, setup, callbacks, std::move(*state),
                setup.data_root / "bootstrap" / "bootstrap.log"};
  return runner.run();
}

}  // namespace cudaenv::doctor
