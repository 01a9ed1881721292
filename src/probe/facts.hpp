#pragma once
// What probe learns about a machine. Plain values: the command line renders them, the resolver
// and doctor reason over them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/version.hpp"

namespace cudaenv::probe {

// Where a fact came from, so reports can show their evidence.
enum class DriverSource { nvml, cuda_driver_api, proc_version, sys_module, library_file };

struct DriverFacts {
  std::string version;                  // "580.95.05", as the driver prints it
  std::optional<Version> cuda_version;  // highest CUDA the driver supports: "13.0"
  DriverSource version_source = DriverSource::nvml;
  std::string library;              // the libcuda/libnvidia-ml file read, when one was
  bool open_kernel_module = false;  // "Open Kernel Module" in /proc/driver/nvidia/version
  // False when the driver is installed but its kernel module is not running (the version then
  // comes from the library's file name, libcuda.so.535.104.05).
  bool loaded = true;
};

struct GpuFacts {
  int index = 0;
  std::string name;            // "NVIDIA H200"
  Version compute_capability;  // "9.0"
  std::uint64_t memory_bytes = 0;
};

struct KernelModuleFacts {
  bool modules_readable = false;  // /proc/modules could be read at all
  bool nvidia = false;
  bool nvidia_uvm = false;
  bool nvidia_modeset = false;
  bool nvidia_drm = false;
  bool nouveau = false;
  std::vector<std::string> device_nodes;  // "/dev/nvidia0", "/dev/nvidiactl", ...
};

// How a toolkit was found; one toolkit can be reached in several ways.
// distro_package: Debian's and Ubuntu's nvidia-cuda-toolkit, split over /usr (nvcc in /usr/bin,
// the compiler's own files in /usr/lib/nvidia-cuda-toolkit, headers in /usr/include).
enum class ToolkitOrigin {
  versioned_dir,
  default_link,
  opt_cuda,
  cuda_home,
  path_nvcc,
  cudaenv,
  distro_package
};

struct ToolkitFacts {
  std::string path;  // canonical machine path of the prefix
  std::optional<Version>
      version;  // the release ("12.4.1"), or nvcc's version when no release is recorded
  std::string version_source;  // "version.json", "version.txt", "dist-info", "nvcc --version"
  std::optional<Version> nvcc_version;    // "12.4.131"
  std::optional<Version> cudart_version;  // "13.0.96": tells apart releases sharing one nvcc
  // `version` is the release: recorded by the toolkit, or named by the compatibility database
  // (resolve::name_toolkits). False: it is nvcc's version.
  bool release_known = false;
  std::vector<Version> candidate_releases;  // nvcc fits several releases; nothing told which
  bool from_wheels = false;                 // assembled from NVIDIA's pip wheels
  std::vector<ToolkitOrigin> origins;
  std::vector<std::string> found_at;  // the paths it was reached through
};

struct DefaultLinkFacts {
  std::string path;                // "/usr/local/cuda"
  std::vector<std::string> chain;  // every hop, first the link itself
  std::string target;
  bool dangling = false;
};

struct CompilerFacts {
  std::string name;    // the command name: "gcc", "g++-12", "clang"
  std::string family;  // "gcc" or "clang"
  std::string path;    // where it was found
  std::optional<Version> version;
};

struct OsFacts {
  std::string id;          // "ubuntu"
  std::string id_like;     // "debian"
  std::string version_id;  // "24.04"
  std::string codename;    // "noble"
  std::string pretty_name;
  std::string kernel;        // "6.8.0-45-generic"
  std::string architecture;  // "x86_64"
};

struct EnvVariableFacts {
  std::string name;
  std::string value;
};

struct CudaEnvFacts {
  std::vector<EnvVariableFacts> variables;      // CUDA_HOME, CUDA_PATH, ... as set
  std::vector<std::string> cuda_library_paths;  // LD_LIBRARY_PATH entries holding toolkit libraries
};

// Windows Subsystem for Linux 2 (probe/wsl.hpp): the driver is Windows', mapped in at
// /usr/lib/wsl/lib.
struct WslFacts {
  bool wsl2 = false;
  std::string evidence;       // "/proc/sys/kernel/osrelease: 6.6.87.2-microsoft-standard-WSL2"
  bool driver_store = false;  // /usr/lib/wsl/lib exists: Windows' driver libraries are mapped in
  bool dxg_device = false;    // /dev/dxg: the paravirtualised GPU the Windows driver serves
  // libcuda.so.1 files of a Linux driver (real paths), which inside WSL shadow Windows' own.
  std::vector<std::string> linux_driver_libraries;
};

struct MachineFacts {
  std::optional<DriverFacts> driver;
  std::vector<GpuFacts> gpus;
  std::vector<std::string> notes;  // why a part could not be read ("cuInit failed: ...")
  KernelModuleFacts modules;
  std::vector<ToolkitFacts> toolkits;
  std::optional<DefaultLinkFacts> default_link;
  std::vector<CompilerFacts> compilers;
  OsFacts os;
  CudaEnvFacts env;
  std::optional<Version> glibc_headers;  // the glibc of /usr/include/features.h (libc6-dev)
  WslFacts wsl;
  // The first line of /etc/nv_tegra_release, printable: a Jetson board, whose driver comes with
  // NVIDIA JetPack (L4T). Empty elsewhere.
  std::string tegra_release;
};

const char* to_string(DriverSource source);
// The compute capabilities of `gpus`, each once, in the order the GPUs are numbered: a machine
// with two H100s has one architecture (sm_90), and is listed, built and judged for it once.
std::vector<Version> distinct_architectures(const std::vector<GpuFacts>& gpus);
const char* to_string(ToolkitOrigin origin);

}  // namespace cudaenv::probe
