#pragma once
// Running a bootstrap plan step by step: skips what is done (the progress file, then each step's
// done check), asks before privileged steps, logs every command, stops at the first failure, and
// remembers a pending reboot so the run after it continues where this one stopped.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "doctor/bootstrap_plan.hpp"

namespace cudaenv::doctor {

// What the command line shows and asks; domain code never touches the terminal.
struct RunCallbacks {
  std::function<void(const std::string&)> progress;  // one line per event
  std::function<bool(const Step&)> confirm;          // before a privileged step; false stops
};

struct RunSetup {
  const Sysroot& sysroot;  // the machine's dpkg status and boot id are read through it
  ProcessRunner& runner;
  const Environment& env;  // commands run with it; their names are looked up in its PATH
  std::filesystem::path data_root;
  bool as_root = false;
  bool assume_yes = false;
};

enum class RunEnd { finished, waiting_for_reboot };

struct RunSummary {
  RunEnd end = RunEnd::finished;
  int steps_run = 0;
  int steps_skipped = 0;
};

// $CUDAENV_ROOT/bootstrap/state.json
std::filesystem::path state_file(const std::filesystem::path& data_root);

// Errors: a failed step (with its fix as the hint), a declined step, an unwritable progress file.
Result<RunSummary> run_plan(const Plan& plan, const RunSetup& setup, const RunCallbacks& callbacks);

}  // namespace cudaenv::doctor
