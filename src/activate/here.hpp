#pragma once
// The environment a directory asks for: what applies here (here/here.hpp, the one decision) made
// into variables, on top of the environment without cudaenv's earlier activation. `cudaenv env`,
// `exec`, `which`, the prompt hook and the shims all go through here, so they always agree.

#include <filesystem>
#include <optional>

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
};

// `forced_cuda` (exec --cuda) wins over every other source. Errors: a malformed CUDAENV_VERSION,
// .cudaenv or config (ErrorKind::failure or usage, naming the file and line); a selected toolkit
// or cuDNN that is not installed (ErrorKind::not_found, with the install command as the hint).
Result<Activated> activate_here(const Environment& current, const std::filesystem::path& cwd,
                                const std::optional<VersionSpec>& forced_cuda = std::nullopt);

// "12.4 (from /repo/.cudaenv)", "12.4 (from CUDAENV_VERSION)": a selection for messages.
using here::describe_selection;

// The environment that applies in `cwd` whether or not the hook ran (scan and why read the
// project's toolkit and cuDNN from it): activation's, or — a selection nothing serves — the
// environment without cudaenv's activation, as the hook leaves it. Errors: a malformed
// .cudaenv, CUDAENV_VERSION or config, an untrusted prefix.
Result<Environment> environment_here(const Environment& current, const std::filesystem::path& cwd);

// The selection's warnings (keys of its file nobody reads), one "warning: …" line each, made
// printable: they quote the file's text. Empty when there is none.
std::string warning_lines(const project::Selection& selection);

}  // namespace cudaenv::activate
