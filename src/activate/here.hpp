#pragma once
// The environment a directory asks for: what applies here (here/here.hpp, the one decision) made
// into variables, on top of the environment without cudaenv's earlier activation. `cudaenv env`,
// `exec`, `which`, the prompt hook and the shims all go through here, so they always agree.

#include <filesystem>
#include <optional>

#include "activate/host_compiler.hpp"
#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "here/here.hpp"
#include "install/store.hpp"
#include "project/selection.hpp"

namespace cudaenv::activate {

struct Activated {
  here::Here here;  // what decided: the selection, the stores, the trace
  project::Selection selection;
  Environment base;         // the environment without cudaenv's earlier activation
  Environment environment;  // what this directory asks for: `base` when the system's applies
  std::optional<install::Installed> toolkit;
  std::optional<install::Installed> cudnn;
  // The host compiler handed to the toolkit's nvcc (chosen once: the environment, the absent-pin
  // warning and doctor's check read this choice); nullopt without a toolkit.
  std::optional<HostCompilerChoice> host;
};

// `forced_cuda` (exec --cuda) wins over every other source. Errors: a malformed CUDAENV_VERSION,
// .cudaenv or config (ErrorKind::failure or usage, naming the file and line); a selected toolkit
// or cuDNN that is not installed (ErrorKind::not_found, with the install command as the hint).
Result<Activated> activate_here(const Environment& current, const std::filesystem::path& cwd,
                                const std::optional<VersionSpec>& forced_cuda = std::nullopt);

// The activation of a decision already made (find_here's, on the environment without cudaenv's
// earlier activation): for commands that decide once and read both. `here.missing` must be unset.
Activated activate(here::Here here, const Environment& current);

// "12.4 (from /repo/.cudaenv)", "12.4 (from CUDAENV_VERSION)": a selection for messages.
using here::describe_selection;

// What applies in a directory whether or not the hook ran, and the environment a process started
// there gets once it has (scan, why and doctor read both): activation's environment; the current
// one when the hook already carries it (with whatever a later rc line changed); or — nothing
// selected, or a selection nothing serves (here.missing) — the environment without cudaenv's
// activation, as the hook leaves it.
struct Applied {
  here::Here here;
  Environment activation;   // what the hook sets here (Activated::environment)
  Environment environment;  // what a process started from this shell gets once the hook ran
  std::optional<HostCompilerChoice> host;  // as in Activated
};
Applied apply(here::Here here, const Environment& current);

// find_here, then apply. Errors: a malformed .cudaenv, CUDAENV_VERSION or config, an untrusted
// prefix (a missing toolkit is here.missing, not an error).
Result<Applied> environment_here(const Environment& current, const std::filesystem::path& cwd);

// The selection's warnings (keys of its file nobody reads), one "warning: …" line each, made
// printable: they quote the file's text. Empty when there is none.
std::string warning_lines(const project::Selection& selection);

}  // namespace cudaenv::activate
