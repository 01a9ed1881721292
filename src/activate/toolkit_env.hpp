#pragma once
// The environment a toolkit is used in (docs/design.md §4): what `cudaenv exec` gives a command and
// what `cudaenv verify` builds and runs its program in.

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "activate/host_compiler.hpp"
#include "core/environment.hpp"

namespace cudaenv::activate {

struct ToolkitPrefix {
  std::string path;            // the prefix as the running process sees it (a host path)
  std::string version;         // what CUDAENV_ACTIVE names: "13.0.2"
  std::string cudnn_lib = {};  // a cuDNN's lib directory put first on LD_LIBRARY_PATH; empty: none
  std::string host_compiler = {};  // the project's host_compiler pin ("g++-11"); empty: none
  // bin/nvcc is there. A runtime-only prefix (from a package index: NVIDIA's cu11/cu12 wheels
  // carry no nvcc) names no compiler: no CUDACXX, and no other toolkit's bin/ left on PATH.
  bool has_compiler = true;
  // A forward-compatibility library's directory (here::ForwardCompat, where it applies) put first
  // on LD_LIBRARY_PATH, ahead of the toolkit's own; empty: none.
  std::string forward_compat_lib = {};
};

// Whether the toolkit at `prefix` has its compiler driver, bin/nvcc.
bool has_compiler(const std::filesystem::path& prefix);

// The variables that select `toolkit`, computed against `current`: CUDA_HOME, CUDA_PATH and
// CUDAToolkit_ROOT = P, CUDACXX = P/bin/nvcc, CUDAENV_ACTIVE = version, P/bin first on PATH and
// P/lib64 (then the cuDNN lib directory, if any) first on LD_LIBRARY_PATH; CUDAHOSTCXX and
// NVCC_PREPEND_FLAGS (-ccbin) only when the default c++ is a GCC the toolkit refuses or the
// project pins one (choose_host_compiler). A list entry already
// present is moved to the front, never repeated; when `current` already has a cudaenv-activated
// toolkit (CUDAENV_ACTIVE with CUDA_HOME), that toolkit's entries are removed so two toolkits never
// stack.
std::map<std::string, std::string> toolkit_variables(const Environment& current,
                                                     const ToolkitPrefix& toolkit);
// The same with the host compiler already chosen: for an environment that is not this machine's
// (a container recipe), where `current`'s PATH names no file here.
std::map<std::string, std::string> toolkit_variables(const Environment& current,
                                                     const ToolkitPrefix& toolkit,
                                                     const HostCompilerChoice& host);

// `current` with toolkit_variables applied: the environment a child process gets.
Environment toolkit_environment(const Environment& current, const ToolkitPrefix& toolkit);
// The same with the host compiler already chosen (activation chooses it once per run).
Environment toolkit_environment(const Environment& current, const ToolkitPrefix& toolkit,
                                const HostCompilerChoice& host);

// A ':'-separated list with `entry` first and no other copy of it, nor of anything in `remove`.
// Entries compare after dropping trailing slashes. Empty entries (which mean the current
// directory) are kept where they were; an empty list yields just `entry`, with no stray ':'.
std::string prepend_entry(std::string_view list, const std::string& entry,
                          const std::vector<std::string>& remove = {});

}  // namespace cudaenv::activate
