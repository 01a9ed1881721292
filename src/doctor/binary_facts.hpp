#pragma once
// What doctor reads from the active Python's installed binaries (through scan/): the framework
// packages' GPU code, the cuDNN copies a process of that Python can reach, Triton's ptxas.

#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/sysroot.hpp"
#include "probe/host_facts.hpp"
#include "scan/binaries.hpp"
#include "scan/copies.hpp"
#include "scan/triton.hpp"

namespace cudaenv::doctor {

struct BinaryFacts {
  bool scanned = false;  // false: not read (no python3, or no site-packages found)
  std::string not_read;  // why not
  std::vector<std::string> site_packages;
  std::vector<scan::BinaryScan>
      framework_binaries;                       // torch, jaxlib and its plugins, cupy, tensorflow
  std::vector<scan::LibraryCopy> cudnn_copies;  // libcudnn.so.9 reachable from that Python
  std::optional<scan::TritonPtxas> triton;
  // The walk's limits reached and what it could not read: a verdict over part of the packages
  // says so rather than passing quietly.
  std::vector<std::string> scan_warnings;
};

// Reads them for the interpreter `python` describes, in the site-packages it named in its one
// answer (no second run). Under a sysroot (a fixture machine) the site-packages of the prefix it
// lives in are read from the files, and LD_LIBRARY_PATH, CUDA_HOME, TRITON_PTXAS_PATH and the
// ld.so cache are read inside the root.
BinaryFacts gather_binary_facts(const Sysroot& sysroot, const Environment& env,
                                const probe::PythonFrameworkFacts& python);

// torch's architectures from the code in its torch/lib/libtorch_cuda.so, when the probe read its
// version without importing it (and so without the build's arch flags): "sm_80 … compute_90".
void read_torch_archs_from_binaries(const BinaryFacts& binaries,
                                    probe::PythonFrameworkFacts& python);

// Whether a site-packages entry is a framework package whose GPU code doctor judges.
bool is_framework_package(const std::string& package);

}  // namespace cudaenv::doctor
