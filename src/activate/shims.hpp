#pragma once
// Shims: $CUDAENV_ROOT/shims/<tool> links to the small shim program, which runs the tool of the
// toolkit that applies in the current directory. For IDEs, Makefiles, CI scripts and `sudo -E`,
// where no prompt hook runs.

#include <filesystem>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "install/store.hpp"

namespace cudaenv::activate {

constexpr const char* shim_program_name = "cudaenv-shim";

inline std::filesystem::path shims_directory(const install::Store& store) {
  return store.root / "shims";
}

struct ToolTarget {
  std::string path;         // the real program
  Environment environment;  // the one `cudaenv exec` gives, for the program to run in
};

// The program a shim named `tool` runs in `cwd`: <prefix>/bin/<tool> of the toolkit that applies,
// or, when the system's applies, the first `tool` on PATH that is not a shim. Errors (never a
// fall-through to an unrelated program): a malformed selection, a toolkit not installed, a tool
// the toolkit lacks, no such tool on PATH (ErrorKind::not_found with the reason).
Result<ToolTarget> resolve_tool(const Environment& current, const std::filesystem::path& cwd,
                                const std::string& tool);

// Makes the shims directory hold exactly one link to `shim_program` per executable in the
// installed toolkits' bin/ directories. Returns the tools shimmed, sorted.
Result<std::vector<std::string>> rehash(const install::Store& store,
                                        const std::filesystem::path& shim_program);

}  // namespace cudaenv::activate
