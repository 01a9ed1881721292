#pragma once
// What each ecosystem needs to build for, or pick binaries for, a GpuSubject, each in the exact
// form its tool reads (docs/arch.md gives every grammar with its source):
//   conda   export CONDA_OVERRIDE_CUDA="13.0" and CONDA_OVERRIDE_CUDA_ARCH="8.0=A100SXM480GB"
//           (CEP 46: the lowest GPU, with its model)
//   pixi    [system-requirements] cuda = "13.0"
//   spack   +cuda cuda_arch=80,90 ^cuda@:13.0
//   nix     { cudaSupport = true; cudaCapabilities = [ "8.0" "9.0" ]; }
//   cmake   -DCMAKE_CUDA_ARCHITECTURES="80;90"
//   torch   export TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"
//   variant the NVIDIA wheel-variant provider's properties, "nvidia :: sm_arch :: 90_real"
//   variant-env  the provider's overrides, NV_VARIANT_PROVIDER_FORCE_SM_ARCH="9.0"
// Every value is quoted for a shell and checked against a set of characters a double-quoted
// word cannot expand, so `eval "$(cudaenv arch --format conda)"` runs nothing else.
// Pure text from plain values: nothing here reads the machine.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arch/subject.hpp"
#include "core/error.hpp"

namespace cudaenv::arch {

enum class Format { text, conda, pixi, spack, nix, cmake, torch, variant, variant_env, json };

// "conda" → Format::conda; nullopt for a name that is none of format_names().
std::optional<Format> parse_format(std::string_view name);
// "text, conda, pixi, spack, nix, cmake, torch, variant, variant-env or json"
std::string format_names();
std::string_view format_name(Format format);

using Variables = std::vector<std::pair<std::string, std::string>>;

// CONDA_OVERRIDE_CUDA and CONDA_OVERRIDE_CUDA_ARCH. Always an answer: an empty value is how
// conda is told a virtual package is absent (no driver: no __cuda; no GPU, or no __cuda: no
// __cuda_arch, as CEP 46 requires).
Variables conda_variables(const GpuSubject& subject);

// The facts below are not always known: without them the answer is ErrorKind::not_found,
// saying what is missing and how to name a machine that has it (--target NAME).

// The driver's CUDA, major.minor: pixi's [system-requirements] cuda.
Result<std::string> pixi_cuda(const GpuSubject& subject);
// "+cuda cuda_arch=80,90", with " ^cuda@:13.0" when the driver's CUDA is known.
Result<std::string> spack_spec(const GpuSubject& subject);
// "8.0", "9.0": nixpkgs' config.cudaCapabilities.
Result<std::vector<std::string>> nix_capabilities(const GpuSubject& subject);
// "80;90": each entry gives SASS and PTX for that GPU (CMake's plain number).
Result<std::string> cmake_architectures(const GpuSubject& subject);
// "8.0;9.0+PTX": SASS for each GPU, PTX for the newest so a newer GPU can still JIT.
Result<std::string> torch_arch_list(const GpuSubject& subject);
// The properties the NVIDIA variant provider reports for such a machine, in its priority order:
// cuda_version_lower_bound, cuda_version_upper_bound, then sm_arch for the newest GPU. Needs a
// driver whose CUDA lies in the range the provider accepts (11.0 to 15.20).
Result<std::vector<std::string>> variant_properties(const GpuSubject& subject);
// NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION (and NV_VARIANT_PROVIDER_FORCE_SM_ARCH when a GPU
// is known): what makes the provider answer for this subject on another machine.
Result<Variables> variant_environment(const GpuSubject& subject);

// The text of one format, as `cudaenv arch --format NAME` prints it (every line ends in '\n').
// Format::text and Format::json are the command line's: ErrorKind::usage.
Result<std::string> render(Format format, const GpuSubject& subject);

// What the user must know about how a tool sees these GPUs, one sentence each: the variant
// provider choosing for the newest GPU alone on a mixed machine.
std::vector<std::string> notes(Format format, const GpuSubject& subject);

}  // namespace cudaenv::arch
