#pragma once
// `cudaenv hook-env`: what the prompt hook applies when something it watches changed. The shell
// function decides with builtins alone whether to call it (docs/design.md §5); this is the slow
// path, and it still reads no manifest, loads no library and touches no network.

#include <filesystem>
#include <optional>
#include <vector>

#include "activate/activation.hpp"
#include "activate/shell.hpp"
#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "install/store.hpp"

namespace cudaenv::activate {

// The versions of files whose warnings the hook has said already (see hook_env), most recent
// last: exported, so a shell started from this one does not repeat them either.
constexpr const char* warned_variable = "CUDAENV_WARNED";

struct HookOutcome {
  Changes changes;                 // to apply in the shell, CUDAENV_DIFF included
  std::vector<WatchedFile> watch;  // what decides whether the next prompt calls hook-env again
  std::vector<Error> problems;     // a malformed file or a version not installed (the shell
                                   // gets the environment without any cudaenv toolkit), a
                                   // CUDAENV_DIFF cudaenv did not write (ignored)
};

// A file's warnings (unknown keys beside a valid pin) are said once per version of that file
// (its path, device, inode, size and modification time), not at each re-entry into the project;
// errors, with which nothing is activated, are said whenever the hook runs hook-env. The note
// that this machine matches none of the targets the project file declares (its driver below
// every floor, or a GPU arch no target lists) is said once per version of that file too.
struct LiveMachine {
  std::optional<Version> driver;  // the loaded kernel module's, when known
  std::vector<Version> gpus;      // the GPUs' archs the last full probe of this boot saw
};
HookOutcome hook_env(const Environment& current, const std::filesystem::path& cwd,
                     const LiveMachine& machine = {});

// What hook-env prints: the statements for stdout, and each problem as one line for stderr
// ("cudaenv: <message>; <hint>\n", empty when there is none). Both programs that answer
// hook-env (the `cudaenv` front and the small `cudaenv-shim`) print exactly these.
std::string hook_statements(Shell shell, const HookOutcome& outcome);
std::string hook_problem_line(const HookOutcome& outcome);

// The files whose change can change the outcome here: the .cudaenv that applies (a change of
// which one applies, or of CUDAENV_VERSION, the shell function sees itself), the global config,
// and the store's toolkit and cuDNN directories (an install or uninstall). Stamps are created
// under the data root's cache; when that is not writable the stamp is a path that never exists,
// so the hook simply asks again at each prompt. A /proc or /sys file is not watched (it seems
// modified at every look).
std::vector<WatchedFile> watch_list(const Environment& env,
                                    const std::optional<std::filesystem::path>& project_file);
// The same over a store already found (what applies here found it: not a second lookup).
std::vector<WatchedFile> watch_list(const Environment& env,
                                    const std::optional<std::filesystem::path>& project_file,
                                    const install::Store& store);

}  // namespace cudaenv::activate
