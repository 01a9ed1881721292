#pragma once
// Finding the CUDA-carrying binaries under a set of directories and reading what each carries.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "scan/fatbin.hpp"

namespace cudaenv::scan {

struct BinaryScan {
  std::string path;
  std::vector<GpuCode> codes;            // distinct, sorted
  std::vector<std::string> cuda_needed;  // DT_NEEDED entries that are CUDA libraries
  std::string error;                     // a damaged file: what is wrong (the walk goes on)
};

// One file: nullopt when it is not an ELF, or is one that carries no GPU code and needs no CUDA
// library. A damaged ELF is returned with `error` set.
std::optional<BinaryScan> scan_binary(const std::filesystem::path& path);

// Whether a DT_NEEDED name is one of NVIDIA's CUDA libraries (libcudart.so.13, libcudnn.so.9…).
bool is_cuda_library(std::string_view soname);

struct WalkResult {
  std::vector<BinaryScan> binaries;  // sorted by path
  size_t files_seen = 0;
  bool truncated = false;               // the file limit was reached
  std::vector<std::string> unreadable;  // roots that do not exist or cannot be listed
};

// Every CUDA-carrying ELF file under the roots (a root may itself be a file). Links are not
// followed (a library's versioned names are scanned once, as the file they name), and at most
// `max_files` files are looked at, so a hostile or huge tree cannot hold the scan forever.
WalkResult scan_paths(const std::vector<std::filesystem::path>& roots, size_t max_files = 400000);

}  // namespace cudaenv::scan
