#pragma once
// Finding the CUDA-carrying binaries under a set of directories and reading what each carries.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scan/fatbin.hpp"

namespace cudaenv::scan {

struct BinaryScan {
  std::string path;
  std::vector<GpuCode> codes;            // distinct, sorted
  std::vector<std::string> cuda_needed;  // DT_NEEDED entries that are CUDA libraries
  std::string error;        // a damaged or unreadable file: what is wrong (the walk goes on)
  bool unreadable = false;  // the file could not be opened: its GPU code is unknown
};

// One file: nullopt when it is not an ELF, or is one that carries no GPU code and needs no CUDA
// library. A damaged ELF, and a file that cannot be opened (its GPU code is then unknown), are
// returned with `error` set.
std::optional<BinaryScan> scan_binary(const std::filesystem::path& path);

// Whether a DT_NEEDED name is one of NVIDIA's CUDA libraries (libcudart.so.13, libcudnn.so.9…).
bool is_cuda_library(std::string_view soname);

// What a walk may cost, whatever the tree holds. The walk keeps one open directory per level
// (so memory is linear in depth) and never recurses; a limit reached is a warning naming the
// path and the limit, never a silent cut.
struct WalkLimits {
  size_t max_entries = 400000;               // directory entries looked at, all roots together
  size_t max_depth = 64;                     // directory levels below a root
  size_t max_path_bytes = size_t{64} << 20;  // the paths of the files kept for reading
};

struct WalkResult {
  std::vector<BinaryScan> binaries;  // sorted by path
  size_t files_seen = 0;             // directory entries looked at
  size_t unreadable_files = 0;       // binaries whose file could not be opened
  bool truncated = false;            // a limit was reached: `warnings` says which and where
  std::vector<std::string>
      unreadable;                     // roots and directories that do not exist or cannot be listed
  std::vector<std::string> special;   // the first FIFOs, devices and sockets: "PATH (a FIFO)"
  size_t special_count = 0;           // all of them (never opened)
  std::vector<std::string> warnings;  // each limit reached, naming the path and the limit
  std::optional<Error> failure;       // reading failed as a whole (out of memory): the error
};

// Every CUDA-carrying ELF file under the roots (a root may itself be a file). Links are not
// followed (a library's versioned names are scanned once, as the file they name), and the walk
// stays within `limits`, so a hostile or huge tree cannot hold the scan forever or exhaust
// memory. Files are read on a few threads; an exception there (std::bad_alloc) ends the reading
// and is returned as `failure`, never std::terminate.
WalkResult scan_paths(const std::vector<std::filesystem::path>& roots,
                      const WalkLimits& limits = {});

}  // namespace cudaenv::scan
