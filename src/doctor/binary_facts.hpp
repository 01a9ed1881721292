#pragma once
// What doctor reads from the active Python's installed binaries (through scan/): the framework
// packages' GPU code, the cuDNN copies a process of that Python can reach, Triton's ptxas.

#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "scan/binaries.hpp"
#include "scan/copies.hpp"
#include "scan/triton.hpp"

namespace cudaenv::doctor {

struct BinaryFacts {
  bool scanned = false;  // false: not read (no python3, or a sysroot other than /)
  std::string not_read;  // why not
  std::vector<std::string> site_packages;
  std::vector<scan::BinaryScan>
      framework_binaries;                       // torch, jaxlib and its plugins, cupy, tensorflow
  std::vector<scan::LibraryCopy> cudnn_copies;  // libcudnn.so.9 reachable from that Python
  std::optional<scan::TritonPtxas> triton;
};

// Reads them for `python` (a path as found on PATH) on the host root only: a fixture machine's
// python3 is not asked, and its files are not scanned.
BinaryFacts gather_binary_facts(const Sysroot& sysroot, ProcessRunner& runner,
                                const Environment& env, const std::string& python);

// Whether a site-packages entry is a framework package whose GPU code doctor judges.
bool is_framework_package(const std::string& package);

}  // namespace cudaenv::doctor
