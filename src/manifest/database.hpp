#pragma once
// The compatibility database: what NVIDIA, the cuDNN support matrices and the framework projects
// publish about which driver, toolkit, cuDNN and framework builds fit together. Loaded from the
// TOML files in manifests/ (compiled in; a newer copy in the data root wins). Every record keeps
// the source keys it was taken from.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/version.hpp"

namespace cudaenv::manifest {

struct Provenance {
  std::vector<std::string> sources;  // keys of Database::sources
  std::string confidence;            // "high", "medium", "inferred" or "unconfirmed"
  std::string note;
  std::string basis;  // for "inferred"/"unconfirmed": what the value rests on

  // True when no primary source states the record's facts: answers resting on it say so.
  bool unconfirmed() const { return confidence == "inferred" || confidence == "unconfirmed"; }
};

struct CudaRelease {
  Version version;                    // 12.4.1
  std::string label;                  // "12.4 Update 1"
  std::optional<Version> min_driver;  // Linux x86_64 driver for full support; nullopt: unknown
  std::optional<Version> nvcc;        // the cuda_nvcc component's version
  Provenance provenance;
  std::optional<Version> cudart;  // the cuda_cudart component's: tells apart releases of one nvcc
  // The redist components NVIDIA also publishes as wheels, with their versions ("cuda_nvcc",
  // "13.0.88"), from the generated [[redist]] rows: the wheel versions of the release, for an
  // index that lacks the cuda-toolkit metapackage. Empty when no manifest of it was read.
  std::vector<std::pair<std::string, std::string>> components = {};
  // A release the redist index lists but whose driver floor is not known: the resolver offers
  // it only when asked to (--include-unchecked).
  bool unchecked() const { return !min_driver.has_value(); }
};

// Minor-version compatibility of a major family (12.x runs on any driver >= 525.60.13).
struct CudaFamily {
  int major = 0;
  Version minor_compat_floor;
  Provenance provenance;
};

struct GpuArch {
  Version compute_capability;         // 8.6
  std::string sm;                     // sm_86
  std::string name;                   // Ampere
  Version first_cuda;                 // first toolkit that can compile for it
  std::optional<Version> last_cuda;   // last toolkit that can; nullopt: still supported
  std::optional<Version> min_driver;  // the oldest driver that knows this GPU, where published
  std::string examples;
  Provenance provenance;
  // Only Jetson (Tegra) boards have it: their driver and CUDA come with JetPack (L4T), not from
  // the desktop and datacenter driver branches the database models.
  bool tegra = false;
};

// A GPU model a `.cudaenv` target may name (`gpu = "H100"`): the compute capability it has.
struct GpuModel {
  std::string name;  // as NVIDIA names it, without "NVIDIA"/"GeForce": "RTX 4090", "H100"
  Version compute_capability;
  Provenance provenance;
  bool datacenter = false;  // one of NVIDIA's data-center products: forward compatibility runs
};

struct HostCompilerLimit {
  VersionSpec cuda;  // the toolkit releases this row applies to
  int gcc_max = 0;
  int clang_max = 0;
  Provenance provenance;
};

// The newest glibc whose <math.h> the toolkit's headers compile with ([[glibc]] in cuda.toml).
struct GlibcLimit {
  VersionSpec cuda;
  Version glibc_max;                // 2.40: glibc 2.41's declarations clash
  std::string clash;                // the functions, for messages
  std::optional<Version> fixed_in;  // the first toolkit whose headers accept the next glibc
  Provenance provenance;
};

struct CudnnRelease {
  Version version;       // 9.1.0
  Version full_version;  // 9.1.0.70
  std::vector<int> cuda_majors;
  Provenance provenance;
};

// A row of NVIDIA's cuDNN support matrix: this cuDNN's build for one CUDA major supports these
// toolkit minors.
struct CudnnSupport {
  Version cudnn;
  int cuda_major = 0;
  Version cuda_min;
  Version cuda_max;
  Provenance provenance;
};

struct PytorchVariant {
  std::string tag;  // cu121
  Version cuda;     // 12.1
  Version cudnn;    // 9.1.0.70, as bundled in the wheel
  bool experimental = false;
  std::optional<std::vector<Version>> sass;  // compiled architectures; nullopt: not known
  std::vector<Version> ptx;
  std::string arch_source;
  Provenance provenance;  // the variant's own confidence and basis, where they differ
};

struct PytorchRelease {
  Version version;  // 2.4 (a release series)
  std::string pypi_default;
  std::string index_url;  // with {tag}
  std::vector<PytorchVariant> variants;
  Provenance provenance;
};

struct TensorflowRelease {
  Version version;
  Version cuda;   // tested configuration: major.minor
  Version cudnn;  // major.minor
  Provenance provenance;
};

struct JaxPlugin {
  int cuda_major = 0;
  std::string pip_extra;  // jax[cuda12]
  VersionSpec cuda;       // toolkit requirement
  VersionSpec cudnn;
  int min_driver_branch = 0;
  Version min_compute_capability;
  Provenance provenance;
};

struct DriverBranch {
  int branch = 0;
  std::string package;  // nvidia-driver-535
  Version max_cuda;
  Provenance provenance;
};

// NVIDIA's CUDA forward-compatibility package for one toolkit minor (cuda-compat-12-8): a newer
// user-mode driver that runs that CUDA on an older kernel module of `host_branches`, on
// data-center GPUs. The branches an installed library accepts come from its own note; these
// rows plan before anything is installed.
struct ForwardCompatPackage {
  Version cuda;         // 12.8
  std::string package;  // cuda-compat-12-8
  Version driver;       // the library's version: 570.124.06
  std::vector<int> host_branches;
  Provenance provenance;
};

struct Source {
  std::string key;
  std::string citation;
};

struct Database {
  std::vector<CudaRelease> cuda_releases;  // oldest first
  std::vector<CudaFamily> cuda_families;
  std::vector<GpuArch> gpu_archs;
  std::vector<GpuModel> gpu_models;
  // The models by name with their compute capability, as project::name_gpu_archs takes them.
  std::vector<std::pair<std::string, Version>> gpu_model_archs() const;
  std::vector<HostCompilerLimit> host_compilers;
  std::vector<GlibcLimit> glibc_limits;
  std::vector<CudnnRelease> cudnn_releases;  // oldest first
  std::vector<CudnnSupport> cudnn_support;
  std::vector<PytorchRelease> pytorch;  // oldest first
  std::vector<TensorflowRelease> tensorflow;
  std::vector<JaxPlugin> jax;
  std::vector<DriverBranch> driver_branches;         // oldest first
  std::vector<ForwardCompatPackage> forward_compat;  // oldest first
  std::vector<Source> sources;
  std::string revision;  // the oldest revision among the files loaded

  const CudaFamily* family(int major) const;
  const GpuArch* arch(const Version& compute_capability) const;
  const HostCompilerLimit* host_compiler(const Version& cuda) const;
  const GlibcLimit* glibc_limit(const Version& cuda) const;
  const CudnnRelease* cudnn(const Version& full_or_short) const;
  // The oldest driver branch whose drivers support `cuda` (nvidia-driver-535 for 12.2).
  const DriverBranch* branch_for(const Version& cuda) const;
  bool has_source(const std::string& key) const;
  // The model a device name is, as NVML or /proc/driver/nvidia/gpus report it ("NVIDIA H100 80GB
  // HBM3", "Tesla T4", "NVIDIA GeForce RTX 4090"): the longest model name its leading words make,
  // ignoring "NVIDIA", "GeForce" and "Tesla"; nullptr for a name the database does not know.
  const GpuModel* model_of_device(const std::string& device_name) const;
};

}  // namespace cudaenv::manifest
