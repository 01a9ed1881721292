#pragma once
// The GPUs a build or an install is for: this machine's (probe's reading of its driver and its
// GPUs) or a target a project declares in .cudaenv ([targets.NAME]). Every ecosystem's answer
// (arch/formats.hpp) is rendered from this one value, so the conda, pixi, Spack, Nix, CMake,
// PyTorch and wheel-variant lines of one machine never disagree about what they describe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "manifest/database.hpp"
#include "probe/driver.hpp"
#include "project/targets.hpp"

namespace cudaenv::arch {

// Where the driver's CUDA version comes from.
enum class CudaSource {
  none,      // no driver, or one older than every branch the database knows
  driver,    // the driver itself said (cuDriverGetVersion through libcuda)
  database,  // the database's driver branches (a declared target, or libcuda not loadable)
};

struct GpuSubject {
  std::string name;       // "this machine", or the declared target's name ("a100")
  bool declared = false;  // a [targets.NAME] of .cudaenv rather than the machine read here
  std::string file;       // declared: the .cudaenv that declares it
  std::string driver;     // "580.95.05", a branch ("580") for a target; "" no driver
  // The newest CUDA the driver fully supports, major.minor ("13.0"): what conda's __cuda and
  // pixi's system requirement state, and the bound of a toolkit that runs here.
  std::optional<Version> driver_cuda;
  CudaSource cuda_source = CudaSource::none;
  std::vector<Version> archs;  // compute capabilities, each once, ascending ("8.0", "9.0")
  // The model of the GPU with the lowest compute capability as CEP 46 spells __cuda_arch's build
  // string ("A100SXM480GB": letters and digits, without "NVIDIA", at most 64); "" for a target.
  std::string lowest_model;
};

// "NVIDIA A100-SXM4-80GB" → "A100SXM480GB" (CEP 46's build string of __cuda_arch).
std::string cep46_model(std::string_view name);

// The newest CUDA (major.minor) that drivers of `driver`'s branch support, from the database's
// driver branches: the branch of its major ("580" for 580.95.05), else the newest branch below
// it. nullopt when it is older than every branch.
std::optional<Version> cuda_for_driver(const manifest::Database& db, const Version& driver);

// This machine, as probe read it. The GPUs' compute capabilities come from a driver library, so
// they pass the same grammar as a declaration's: a value outside it is ErrorKind::integrity
// naming the GPU.
Result<GpuSubject> machine_subject(const probe::DriverReading& reading,
                                   const manifest::Database& db);

// A declared target of `file`. A compute capability outside the grammar (a major and a one-digit
// minor whose sm_ name is untrusted::Field::gpu_arch) is ErrorKind::usage naming the file, the
// target and the fix.
Result<GpuSubject> target_subject(const project::DeclaredTarget& target, const std::string& file,
                                  const manifest::Database& db);

// "sm_80 sm_90", for messages.
std::string sm_names(const std::vector<Version>& archs);

}  // namespace cudaenv::arch
