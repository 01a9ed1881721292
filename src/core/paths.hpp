#pragma once
// Where cudaenv keeps its own files (XDG base directories, DESIGN.md §3).

#include <filesystem>

#include "core/environment.hpp"

namespace cudaenv::paths {

// $CUDAENV_ROOT, else ${XDG_DATA_HOME:-$HOME/.local/share}/cudaenv.
std::filesystem::path data_root(const Environment& env);
// ${XDG_CONFIG_HOME:-$HOME/.config}/cudaenv/config.toml.
std::filesystem::path config_file(const Environment& env);
// The machine root probes read from: $CUDAENV_SYSROOT, else "/".
std::filesystem::path sysroot(const Environment& env);

}  // namespace cudaenv::paths
