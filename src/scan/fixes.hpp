#pragma once
// What to do about a binary that has no code a GPU here can run.

#include <string>

#include "scan/verdict.hpp"

namespace cudaenv::scan {

// The Python distribution a file belongs to: the first path component below site-packages
// ("torch" for …/site-packages/torch/lib/libtorch_cuda.so); empty outside site-packages.
std::string package_of(const std::string& path);

// One line for a `none` verdict: for PTX newer than the driver, the driver to update to; for
// PyTorch, the wheel index or release that carries the architecture and TORCH_CUDA_ARCH_LIST
// for a source build; for any other extension, a rebuild with that architecture.
std::string fix_for(const std::string& path, int arch, const Verdict& verdict);

// The oldest CUDA release whose driver compiles this PTX ISA ("13.0" for 9.0); empty if unknown.
std::string cuda_for_ptx_isa(int major, int minor);

}  // namespace cudaenv::scan
