#pragma once
// `cudaenv env --target NAME`: the build settings of a declared target, for CI machines that have
// none of its GPUs. Read from .cudaenv.lock when it locks that target as declared, else derived
// from the declaration alone. Light: the front program runs it without the resolver.

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::lock {

struct TargetSettings {
  std::string name;
  std::string driver;
  std::string mode;    // "full", "minor-compat", "forward-compat", or "" when no lock says
  std::string source;  // the file the settings come from
  // CUDAENV_TARGET, TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES and, when needed, CUDAHOSTCXX.
  std::vector<std::pair<std::string, std::string>> variables;
};

// The settings of the target `name` that `project_file` declares; ErrorKind::not_found naming
// the declared targets when it declares none of that name. A lock that exists but cannot be read
// is an error naming it, never a fallback: ErrorKind::failure (exit 1) when it is unreadable or
// not a lock, ErrorKind::integrity (exit 6) when a value in it fails its grammar.
Result<TargetSettings> target_settings(const std::filesystem::path& project_file,
                                       std::string_view name);

}  // namespace cudaenv::lock
