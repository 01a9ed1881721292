#pragma once
// Whether a GPU can run a binary's code: SASS it runs directly, PTX its driver compiles at load
// time, or nothing ("no kernel image is available for execution on the device").

#include <optional>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "scan/fatbin.hpp"

namespace cudaenv::scan {

// no_kernels: the binary's GPU code defines no kernels, so no GPU needs any code from it.
enum class Coverage { native, jit, none, no_kernels };
const char* to_string(Coverage coverage);

struct PtxIsa {
  int major = 0;
  int minor = 0;
  auto operator<=>(const PtxIsa&) const = default;
};

// The newest PTX ISA a driver compiles, from the CUDA version the driver supports: each CUDA
// release's driver reads the PTX of its own nvcc and older (PTX ISA reference, "Release notes",
// the PTX ISA / CUDA release table). nullopt for a CUDA version newer than the table knows —
// the limit is then not checked.
std::optional<PtxIsa> ptx_isa_for_driver_cuda(const Version& cuda);

struct Verdict {
  Coverage coverage = Coverage::none;
  std::string via;     // the code that runs: "sm_80", "compute_80 (PTX 9.0)"; empty for none
  std::string reason;  // for none: what is missing, in one phrase
};

// `arch` is the GPU's compute capability as major*10+minor (90 for an H100/H200). SASS runs on
// a GPU of the same major and an equal or higher minor (sm_80 code runs on sm_86, not on sm_90);
// PTX for an architecture at or below the GPU's runs after the driver compiles it, when the
// driver knows that PTX ISA version. Cubins without kernels are left out; when nothing else is
// there, the answer is no_kernels.
Verdict verdict_for(const std::vector<GpuCode>& codes, int arch,
                    std::optional<PtxIsa> driver_limit);

// "8.9" or "sm_89" or "89" → 89; nullopt for anything else.
std::optional<int> parse_arch(std::string_view text);
// 89 → "sm_89".
std::string sm_name(int arch);

}  // namespace cudaenv::scan
