#pragma once
// Shims: $CUDAENV_ROOT/shims/<tool> links to the small shim program, which runs the tool of the
// toolkit that applies in the current directory. For IDEs, Makefiles, CI scripts and `sudo -E`,
// where no prompt hook runs.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "install/store.hpp"

namespace cudaenv::activate {

constexpr const char* shim_program_name = "cudaenv-shim";

// How many shims run one another before the next refuses: a shim never runs itself, but a
// wrapper script further down PATH that calls the tool by name again would lead back to it.
constexpr const char* shim_depth_variable = "CUDAENV_SHIM_DEPTH";
constexpr int shim_depth_limit = 8;

inline std::filesystem::path shims_directory(const install::Store& store) {
  return store.root / "shims";
}

struct ToolTarget {
  std::string path;         // the real program
  Environment environment;  // the one `cudaenv exec` gives, for the program to run in
};

// ErrorKind::not_found when CUDAENV_SHIM_DEPTH says shims have run each other shim_depth_limit
// times: a loop, stopped with a clear error instead of running forever.
Status check_shim_depth(const Environment& env);

// The program a shim named `tool` runs in `cwd`: <prefix>/bin/<tool> of the toolkit that applies,
// or, when the system's applies, the first `tool` on PATH that is not the shim program (compared
// by device and inode, so no spelling of PATH leads back to it). Errors (never a fall-through to
// an unrelated program): a malformed selection, a toolkit not installed, a tool the toolkit lacks
// or that is a shim itself, no such tool on PATH (ErrorKind::not_found with the reason). The
// environment counts one more shim in CUDAENV_SHIM_DEPTH.
Result<ToolTarget> resolve_tool(const Environment& current, const std::filesystem::path& cwd,
                                const std::string& tool);

// For a runtime-only toolkit (no bin/nvcc: CUDA 11/12 from a package index) asked for one of
// the compiler's programs (nvcc, cudafe++, nvlink, …) it lacks: the error saying so, with the fix
// that exists (--source redist); nullopt otherwise. `cudaenv exec`, `which` and the shims refuse
// with it rather than run another CUDA's compiler found further down PATH.
std::optional<Error> runtime_only_refusal(const std::filesystem::path& prefix,
                                          const std::string& version, const std::string& tool);

// Makes the shims directory hold exactly one link to `shim_program` per executable in the
// installed toolkits' bin/ directories, under a lock (<root>/.lock-shims) so that concurrent
// rehashes, installs and uninstalls never fail or lose a shim. Returns the tools shimmed, sorted.
Result<std::vector<std::string>> rehash(const install::Store& store,
                                        const std::filesystem::path& shim_program);

}  // namespace cudaenv::activate
