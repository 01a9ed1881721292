#pragma once
// The GPU code a binary carries: NVIDIA's fatbinary containers in its `.nv_fatbin` section.
// A container starts with the magic 0xBA55ED50 and holds entries, each a header followed by its
// payload: kind 1 is PTX (the header names the target compute capability and the PTX ISA
// version), kind 2 is an ELF cubin (SASS for one sm_XY). Compressed payloads (zstd or NVIDIA's
// older LZ scheme) still carry these fields in their uncompressed headers, so nothing is
// decompressed. The same facts `cuobjdump --list-elf --list-ptx` prints. Parsing allocates only
// the small GpuCode list (at most one per 64 bytes of input) and its work is bounded by a
// ParseBudget of the input's size.

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scan/elf.hpp"

namespace cudaenv::scan {

enum class CodeKind { sass, ptx };

struct GpuCode {
  CodeKind kind = CodeKind::sass;
  int arch = 0;       // 75 for sm_75 / compute_75
  int ptx_major = 0;  // PTX only: the ISA version, 9.0 for CUDA 13.0's nvcc
  int ptx_minor = 0;
  bool compressed = false;
  // SASS only: an uncompressed cubin with no function in an executable section. nvcc writes
  // one for a translation unit without kernels (NVIDIA's libcufftw.so.12 carries only such an
  // sm_75 cubin): it needs no GPU code on any architecture.
  bool no_kernels = false;

  bool operator==(const GpuCode&) const = default;
  auto operator<=>(const GpuCode&) const = default;
};

// Whether a cubin (an ELF for the GPU) defines a function in an executable section; a cubin
// that cannot be parsed counts as having kernels.
bool cubin_has_kernels(Bytes cubin);

// "sm_75", "compute_80 (PTX 9.0)", "sm_75 (no kernels)".
std::string describe(const GpuCode& code);

// Every entry of every container in a `.nv_fatbin` section's bytes, in order and with
// duplicates (one container per translation unit). A header or payload running past the
// section is ErrorKind::failure.
Result<std::vector<GpuCode>> parse_fatbin_section(Bytes section);

// The containers found among other data (cuFFT keeps thousands in `.ldata`): every 8-byte
// aligned magic that starts a well-formed container is read, anything else is skipped. Only
// data that would be read again past the budget (crafted nested containers) is an error.
Result<std::vector<GpuCode>> find_embedded_fatbins(Bytes data);

// The distinct codes of a list, sorted (SASS first, then PTX, by architecture).
std::vector<GpuCode> distinct(std::vector<GpuCode> codes);

}  // namespace cudaenv::scan
