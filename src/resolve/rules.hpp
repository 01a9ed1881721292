#pragma once
// The compatibility rules, one function each (docs/resolver.md states them in prose).

#include <optional>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "manifest/database.hpp"

namespace cudaenv::resolve {

enum class DriverMode {
  full,          // driver >= the release's minimum
  minor_compat,  // below that, but >= the major family's minor-version-compatibility floor
  unchecked,     // no driver known (login node, CI, container build): no constraint applied
  too_old,
  // Too old, but NVIDIA's forward-compatibility package of the release's minor runs it on this
  // branch and these data-center GPUs (docs/forward-compat.md): `cudaenv compat install X.Y`.
  forward_compat,
};

struct DriverCheck {
  DriverMode mode = DriverMode::unchecked;
  std::optional<Version> full_minimum;  // nullopt when the database does not know it
  std::optional<Version> compat_floor;
  const manifest::ForwardCompatPackage* forward_compat = nullptr;  // set in forward_compat mode
};

DriverCheck check_driver(const manifest::Database& db, const manifest::CudaRelease& release,
                         const std::optional<Version>& driver);

// Whether NVIDIA's forward-compatibility package runs `release` on this (too old) driver: the
// package of its minor, a driver branch the package supports, a library new enough for the
// release, and GPUs that are all data-center ones (by the names the machine or --gpu gave, else
// by compute capability when every model the database knows of it is one: 9.0, not 8.6).
struct ForwardCompatFit {
  const manifest::ForwardCompatPackage* package = nullptr;  // the package that runs it
  std::string problem;  // otherwise why not; empty when no package exists for the minor
};
ForwardCompatFit forward_compat_fit(const manifest::Database& db,
                                    const manifest::CudaRelease& release, const Version& driver,
                                    const std::vector<Version>& gpus,
                                    const std::vector<std::string>& gpu_names);

// Why `release` cannot compile native code for a GPU of this compute capability; nullopt if it can.
std::optional<std::string> arch_problem(const manifest::Database& db,
                                        const manifest::CudaRelease& release,
                                        const Version& compute_capability);

// How a toolkit's code reaches a GPU. NVIDIA's rule: a cubin for X.y runs on X.z for z >= y
// (not the arch-specific sm_XYa/sm_XYf targets, which no toolkit here is asked for), so a toolkit
// without an sm_XZ target still serves the GPU through the family's older member: CUDA 12.8 on
// a B300 (10.3) through sm_100. Compiling for the GPU's own target still needs `native`.
struct ArchFit {
  enum class Kind { native, family, none } kind = Kind::none;
  std::optional<Version> through;  // family: the target whose code runs on the GPU (10.0)
  std::string problem;             // none: why not; family: why not natively
};

ArchFit toolkit_arch_fit(const manifest::Database& db, const manifest::CudaRelease& release,
                         const Version& compute_capability);
// The same for a toolkit known by its version alone (an installed one).
ArchFit toolkit_arch_fit(const manifest::Database& db, const Version& cuda,
                         const Version& compute_capability);

// What a family fit means, for the answer: "CUDA 12.8 has no sm_103 target: its sm_100 code runs
// on this GPU (…); to compile for sm_103 itself, use CUDA >= 12.9".
std::string family_note(const manifest::CudaRelease& release, const Version& compute_capability,
                        const ArchFit& fit);

// Why this driver cannot run a GPU of this compute capability at all (a driver only knows the
// GPUs released before it); nullopt if it can or the database does not say.
std::optional<std::string> gpu_driver_problem(const manifest::Database& db,
                                              const Version& compute_capability,
                                              const std::optional<Version>& driver);

// The newest gcc major that `cuda`'s nvcc accepts (crt/host_config.h), when `gcc` is newer than
// that; nullopt when nvcc accepts it or the database has no limit for the release.
std::optional<int> gcc_too_new(const manifest::Database& db, const Version& cuda,
                               const Version& gcc);

enum class Coverage {
  native,   // machine code for the same major with an equal or lower minor
  ptx_jit,  // only PTX for an equal or lower compute capability: the driver compiles it at start
  none,
  unknown,  // the build's architecture list is not in the database
};

Coverage pytorch_coverage(const manifest::PytorchVariant& variant,
                          const Version& compute_capability);

// "sm_86" for 8.6.
std::string sm_name(const Version& compute_capability);
// The inverse, also accepting the dotted form: "sm_86" or "8.6" -> 8.6; nullopt otherwise.
std::optional<Version> parse_compute_capability(std::string text);

const char* to_string(DriverMode mode);

}  // namespace cudaenv::resolve
