#pragma once
// Host compilers nvcc can use: gcc/g++ and clang/clang++ on PATH, and versioned ones (gcc-12,
// clang-14) that sit beside them, since nvcc often needs an older one than the default.

#include <string_view>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/facts.hpp"

namespace cudaenv::probe {

std::vector<CompilerFacts> probe_compilers(const Sysroot& sysroot, ProcessRunner& runner,
                                           const Environment& env);

// The version of the first `gcc` on PATH (what nvcc runs by default), asking only that one
// program: resolve needs this, not every compiler's.
std::optional<Version> default_gcc_version(const Sysroot& sysroot, ProcessRunner& runner,
                                           const Environment& env);

// The version in `gcc -dumpfullversion -dumpversion` or `clang --version` output.
std::optional<Version> parse_compiler_version(std::string_view output);

}  // namespace cudaenv::probe
