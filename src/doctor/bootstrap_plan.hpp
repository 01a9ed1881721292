#pragma once
// `cudaenv bootstrap`'s plan: from the probe's facts and the resolver's choice, the ordered steps
// that take a fresh Ubuntu 20.04/22.04/24.04 or Debian 12 machine to a working CUDA stack. Pure:
// nothing here reads the machine or runs anything.

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "doctor/checks.hpp"
#include "manifest/database.hpp"

namespace cudaenv::doctor {

struct StepCommand {
  std::vector<std::string> argv;
  std::string input;                     // fed to standard input (a file's lines for tee)
  bool privileged = false;               // needs root: run through sudo when not root
  std::vector<std::string> environment;  // "DEBIAN_FRONTEND=noninteractive"
};

// How to tell, before running a step, that what it does is already in place.
enum class DoneKind {
  never,               // only the progress file says it ran
  packages_installed,  // every package in `names` is installed (dpkg)
  any_package,         // some installed package starts with one of `names`
  file_contains,       // the file at `path` (a host path) holds the line `text`
  toolkit_installed,   // cudaenv's store holds a toolkit matching the spec in `text`
};

struct DoneCheck {
  DoneKind kind = DoneKind::never;
  std::vector<std::string> names;
  std::string path;
  std::string text;
};
std::string describe(const DoneCheck& check);

struct Step {
  std::string id;  // stable, recorded in the progress file: "driver", "toolkit-12.4"
  std::string description;
  std::vector<StepCommand> commands;
  bool privileged = false;  // some command needs root: asked before unless --yes
  DoneCheck done_check;
  bool reboot_after = false;  // the change takes effect only after a reboot
  bool after_reboot = false;  // runs only once the reboot an earlier step asked for happened
  std::string fix;            // what to do when it fails
};

struct BootstrapRequest {
  std::vector<std::string> cuda;     // version specs; empty: the resolver's pick for the GPUs
  std::optional<int> driver_branch;  // --driver
  bool container = false;            // also the NVIDIA container toolkit
  bool as_root = false;              // privileged commands run without sudo
  std::string shell;                 // $SHELL: which rc file gets the hook line
  std::string home;                  // $HOME (a host path)
  std::string root = "/";            // the machine's root on the host: files are written below it
  // Where the toolkit steps download from, when not NVIDIA's redist mirror: the flags each
  // `cudaenv install` step gets ("--source", "pypi", "--index-url", URL) and, for the plan's
  // notes, the index and where it was chosen ("the index URL (set by --index-url)").
  std::vector<std::string> install_flags = {};
  std::string install_source = {};
};

struct Plan {
  std::string os;  // "Ubuntu 22.04.4 LTS"
  std::vector<Step> steps;
  std::vector<std::string> notes;  // the choices made and what is already in place
  bool reboot_needed = false;
};

// The operating systems bootstrap knows how to set up.
bool supported_os(const probe::OsFacts& os);

// Fails for an unsupported OS (exit 1), an unknown CUDA version (3) and a CUDA no GPU here can
// use (4).
Result<Plan> plan_bootstrap(const DoctorFacts& facts, const manifest::Database& db,
                            const BootstrapRequest& request);

// argv as it runs: through "sudo" (with the environment as VAR=value words) when the command is
// privileged and we are not root.
std::vector<std::string> effective_argv(const StepCommand& command, bool as_root);

// The plan as a commented POSIX shell script a person could run by hand.
std::string render_script(const Plan& plan, bool as_root);

}  // namespace cudaenv::doctor
