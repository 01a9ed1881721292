#pragma once
// Where cudaenv keeps its own files (XDG base directories, docs/design.md §3).

#include <filesystem>
#include <string>

#include "core/environment.hpp"
#include "core/error.hpp"

namespace cudaenv::paths {

// $HOME when it is an absolute path, else the installed accounts lookup's answer (the full
// program installs the passwd database's, core/passwd.hpp; the static programs install none and
// hand such a run to the full program), else "/nonexistent": never a path relative to the
// current directory.
std::filesystem::path home_directory(const Environment& env);
// Whether the data root or the config file would come from home_directory's fallback: HOME is not
// an absolute path, and CUDAENV_ROOT / XDG_DATA_HOME or XDG_CONFIG_HOME do not settle them.
bool needs_home_lookup(const Environment& env);
// CUDAENV_ROOT and each entry of CUDAENV_SYSTEM_ROOTS must be absolute: a relative root would make
// whatever directory cudaenv runs in (a cloned repository) the trusted store. Checked once at the
// start of each program; ErrorKind::usage naming the variable, its value and the fix.
Status check_root_variables(const Environment& env);
// $CUDAENV_ROOT, else ${XDG_DATA_HOME:-$HOME/.local/share}/cudaenv.
std::filesystem::path data_root(const Environment& env);
// ${XDG_CONFIG_HOME:-$HOME/.config}/cudaenv/config.toml. (An XDG variable holding a relative
// path is ignored, as the XDG specification says.)
std::filesystem::path config_file(const Environment& env);
// The directory commands run in, as the user's shell names it: $PWD when it is absolute and is
// the current directory (so a symlinked project path finds the same .cudaenv the shell hook
// finds), else the physical current directory.
std::filesystem::path working_directory(const Environment& env);
// This program's own file (/proc/self/exe), for the hook and the shims to call back.
std::filesystem::path running_executable();
// A program installed with cudaenv: <bin>/../libexec/cudaenv/<name> next to the running
// executable's directory, or <name> in that same directory (the build tree, and the programs in
// libexec themselves).
std::filesystem::path companion_program(const std::string& name);
// The machine root probes read from: $CUDAENV_SYSROOT, else "/".
std::filesystem::path sysroot(const Environment& env);

}  // namespace cudaenv::paths
