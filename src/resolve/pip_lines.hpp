#pragma once
// pip command lines for framework builds: the one list of arguments that `resolve` shows as
// `pip install …` and `uv pip install …` lines and that `cudaenv pip-args` prints for scripts,
// and the error for a framework pin that has no build for the pinned CUDA.

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "manifest/database.hpp"

namespace cudaenv::resolve {

// The arguments after `pip install` for one PyTorch build: the requirement ("torch==2.9.*", or
// the exact version pinned), then `--index-url` and the variant's index unless the variant is the
// one PyPI serves by default. No argument holds whitespace.
std::vector<std::string> torch_pip_args(const manifest::PytorchRelease& release,
                                        const manifest::PytorchVariant& variant,
                                        const VersionSpec& spec);

enum class PipTool { pip, uv };

// "pip install "torch==2.9.*" --index-url https://download.pytorch.org/whl/cu130", or the same
// after "uv pip install"; arguments holding shell-special characters are double-quoted.
std::string pip_command(const std::vector<std::string>& args, PipTool tool);

// A PyTorch pin and a CUDA pin that no build satisfies together (torch 2.9 has builds for CUDA
// 12.6, 12.8 and 13.0; CUDA 12.4 is pinned): ErrorKind::no_compatible_set naming both, with the
// nearest fitting choices in the hint (the nearest CUDA that torch has a build for, and the
// newest torch built for the pinned CUDA). nullopt when a build fits or either pin is absent.
std::optional<Error> torch_cuda_mismatch(const manifest::Database& db, const VersionSpec& torch,
                                         const VersionSpec& cuda);

}  // namespace cudaenv::resolve
