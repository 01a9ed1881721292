#include "probe/driver.hpp"

#include <array>
#include <cctype>
#include <filesystem>

#include "core/text.hpp"
#include "probe/wsl.hpp"

namespace cudaenv::probe {

namespace {

// The few driver ABI entry points we call, with their C signatures (cuda.h, nvml.h).
using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);
using CuGetErrorName = int (*)(int, const char**);

using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlSystemGetDriverVersion = int (*)(char*, unsigned);
using NvmlSystemGetCudaDriverVersion = int (*)(int*);
using NvmlDevice = void*;
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using NvmlDeviceGetCount = int (*)(unsigned*);
using NvmlDeviceGetHandleByIndex = int (*)(unsigned, NvmlDevice*);
using NvmlDeviceGetName = int (*)(NvmlDevice, char*, unsigned);
using NvmlDeviceGetCudaComputeCapability = int (*)(NvmlDevice, int*, int*);
using NvmlDeviceGetMemoryInfo = int (*)(NvmlDevice, NvmlMemory*);

constexpr int cu_attribute_cc_major = 75;            // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int cu_attribute_cc_minor = 76;            // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr unsigned nvml_driver_version_buffer = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

template <typename Fn>
Fn lookup(const SharedLibrary& library, const char* name) {
  return reinterpret_cast<Fn>(library.symbol(name));  // NOLINT: dlsym returns void*
}

std::string cuda_error_text(const SharedLibrary& cuda, int code) {
  const char* name = nullptr;
  if (auto get_name = lookup<CuGetErrorName>(cuda, "cuGetErrorName");
      get_name != nullptr && get_name(code, &name) == 0 && name != nullptr) {
    return std::string(name) + " (" + std::to_string(code) + ")";
  }
  return "error " + std::to_string(code);
}

// GPUs through NVML, which answers without creating a CUDA context: much cheaper than cuInit,
// and numbered as nvidia-smi numbers them.
void read_nvml_gpus(const SharedLibrary& nvml, DriverReading& reading) {
  auto get_count = lookup<NvmlDeviceGetCount>(nvml, "nvmlDeviceGetCount_v2");
  auto get_handle = lookup<NvmlDeviceGetHandleByIndex>(nvml, "nvmlDeviceGetHandleByIndex_v2");
  auto get_name = lookup<NvmlDeviceGetName>(nvml, "nvmlDeviceGetName");
  auto get_cc =
      lookup<NvmlDeviceGetCudaComputeCapability>(nvml, "nvmlDeviceGetCudaComputeCapability");
  auto get_memory = lookup<NvmlDeviceGetMemoryInfo>(nvml, "nvmlDeviceGetMemoryInfo");
  unsigned count = 0;
  if (!get_count || !get_handle || !get_name || !get_cc || !get_memory || get_count(&count) != 0)
    return;
  for (unsigned index = 0; index < count; ++index) {
    NvmlDevice device = nullptr;
    std::array<char, 256> name{};
    int major = 0;
    int minor = 0;
    NvmlMemory memory{};
    if (get_handle(index, &device) != 0 || get_name(device, name.data(), name.size()) != 0 ||
        get_cc(device, &major, &minor) != 0 || get_memory(device, &memory) != 0) {
      reading.notes.push_back("GPU " + std::to_string(index) +
                              " could not be queried through NVML");
      continue;
    }
    const auto cc = std::to_string(major) + "." + std::to_string(minor);
    reading.gpus.push_back(
        {static_cast<int>(index), name.data(), *Version::parse(cc), memory.total});
  }
}

// `where`: a soname for the dynamic linker to find, or the very file to load (WSL's).
void read_nvml(LibraryLoader& loader, const std::string& where, DriverReading& reading) {
  auto nvml = loader.open(where);
  if (!nvml) return;
  reading.libraries.push_back(nvml->path());
  auto init = lookup<NvmlInit>(*nvml, "nvmlInit_v2");
  auto shutdown = lookup<NvmlShutdown>(*nvml, "nvmlShutdown");
  auto get_version = lookup<NvmlSystemGetDriverVersion>(*nvml, "nvmlSystemGetDriverVersion");
  if (init == nullptr || get_version == nullptr) {
    reading.notes.push_back(nvml->path() + " lacks nvmlInit_v2/nvmlSystemGetDriverVersion");
    return;
  }
  if (const int rc = init(); rc != 0) {
    reading.notes.push_back("nvmlInit_v2 failed with NVML error " + std::to_string(rc));
    return;
  }
  std::array<char, nvml_driver_version_buffer> buffer{};
  if (get_version(buffer.data(), static_cast<unsigned>(buffer.size())) == 0) {
    DriverFacts facts;
    facts.version = text::trim(buffer.data());
    facts.version_source = DriverSource::nvml;
    facts.library = nvml->path();
    int cuda = 0;
    auto get_cuda =
        lookup<NvmlSystemGetCudaDriverVersion>(*nvml, "nvmlSystemGetCudaDriverVersion_v2");
    if (get_cuda != nullptr && get_cuda(&cuda) == 0 && cuda > 0) {
      facts.cuda_version = Version::from_cuda_int(cuda);
    }
    reading.driver = facts;
  }
  read_nvml_gpus(*nvml, reading);
  if (shutdown != nullptr) shutdown();
}

std::optional<GpuFacts> read_gpu(const SharedLibrary& cuda, int index) {
  auto device_get = lookup<CuDeviceGet>(cuda, "cuDeviceGet");
  auto get_name = lookup<CuDeviceGetName>(cuda, "cuDeviceGetName");
  auto get_attribute = lookup<CuDeviceGetAttribute>(cuda, "cuDeviceGetAttribute");
  auto total_mem = lookup<CuDeviceTotalMem>(cuda, "cuDeviceTotalMem_v2");
  if (!device_get || !get_name || !get_attribute || !total_mem) return std::nullopt;
  int device = 0;
  if (device_get(&device, index) != 0) return std::nullopt;
  std::array<char, 256> name{};
  int major = 0;
  int minor = 0;
  size_t memory = 0;
  if (get_name(name.data(), static_cast<int>(name.size()), device) != 0 ||
      get_attribute(&major, cu_attribute_cc_major, device) != 0 ||
      get_attribute(&minor, cu_attribute_cc_minor, device) != 0 ||
      total_mem(&memory, device) != 0) {
    return std::nullopt;
  }
  GpuFacts gpu;
  gpu.index = index;
  gpu.name = name.data();
  gpu.compute_capability = *Version::parse(std::to_string(major) + "." + std::to_string(minor));
  gpu.memory_bytes = memory;
  return gpu;
}

void read_cuda_driver_api(LibraryLoader& loader, const std::string& where, DriverReading& reading) {
  auto cuda = loader.open(where);
  if (!cuda) return;
  reading.libraries.push_back(cuda->path());
  auto driver_get_version = lookup<CuDriverGetVersion>(*cuda, "cuDriverGetVersion");
  auto init = lookup<CuInit>(*cuda, "cuInit");
  auto get_count = lookup<CuDeviceGetCount>(*cuda, "cuDeviceGetCount");
  if (!driver_get_version || !init || !get_count) {
    reading.notes.push_back(cuda->path() + " lacks the CUDA driver API entry points");
    return;
  }
  int encoded = 0;
  if (driver_get_version(&encoded) == 0 && encoded > 0) {
    if (!reading.driver) {
      reading.driver = DriverFacts{};
      reading.driver->version_source = DriverSource::cuda_driver_api;
    }
    reading.driver->cuda_version = Version::from_cuda_int(encoded);
    if (reading.driver->library.empty()) reading.driver->library = cuda->path();
  }
  if (!reading.gpus.empty()) return;  // NVML listed them; cuInit would only cost time
  if (const int rc = init(0); rc != 0) {
    reading.notes.push_back("cuInit failed: " + cuda_error_text(*cuda, rc));
    return;
  }
  int count = 0;
  if (get_count(&count) != 0) return;
  for (int index = 0; index < count; ++index) {
    if (auto gpu = read_gpu(*cuda, index)) {
      reading.gpus.push_back(std::move(*gpu));
    } else {
      reading.notes.push_back("GPU " + std::to_string(index) + " could not be queried");
    }
  }
}

// Without NVML the version string comes from the kernel module itself.
void read_kernel_module_version(const Sysroot& sysroot, DriverReading& reading) {
  const auto version = kernel_module_driver_version(sysroot);
  if (!version) return;
  if (!reading.driver) reading.driver = DriverFacts{};
  reading.driver->version = *version;
  const auto proc = read_proc_driver_version(sysroot);
  reading.driver->version_source = proc && parse_proc_driver_version(*proc)
                                       ? DriverSource::proc_version
                                       : DriverSource::sys_module;
}

// Which kernel module flavour runs is only in /proc, whichever source gave the version: NVML
// answering must not hide that the open module is loaded.
void read_kernel_module_flavour(const Sysroot& sysroot, DriverFacts& driver) {
  if (auto proc = read_proc_driver_version(sysroot)) {
    driver.open_kernel_module = text::contains(*proc, "Open Kernel Module");
  }
}

// The kernel module is not running, but the driver's libraries are installed: their file names
// still say which driver it is.
void read_installed_library_version(const Sysroot& sysroot, DriverReading& reading) {
  for (const auto& library : reading.libraries) {
    const auto real = sysroot.canonical(library).value_or(library);
    const auto version =
        driver_version_from_library_name(std::filesystem::path(real).filename().string());
    if (!version) continue;
    if (!reading.driver) reading.driver = DriverFacts{};
    reading.driver->version = *version;
    reading.driver->version_source = DriverSource::library_file;
    reading.driver->library = library;
    reading.driver->loaded = false;
    reading.notes.push_back("NVIDIA driver " + *version +
                            " is installed but its kernel module is not loaded");
    return;
  }
}

// Inside WSL2 the Windows driver's own libraries, by their paths: a Linux driver installed by
// mistake puts its libcuda.so.1 where the dynamic linker may look first, and it answers nothing.
// No kernel module or library file name tells the Windows driver's version (libcuda.so.1.1).
void read_wsl_driver(const Sysroot& sysroot, LibraryLoader& loader, DriverReading& reading) {
  const std::string directory = wsl_driver_directory;
  read_nvml(loader, directory + "/libnvidia-ml.so.1", reading);
  read_cuda_driver_api(loader, directory + "/libcuda.so.1", reading);
  if (reading.driver && !reading.driver->version.empty()) return;
  reading.notes.push_back(
      sysroot.is_directory(directory)
          ? "WSL2: the Windows NVIDIA driver does not answer through " + directory
          : "WSL2 without " + directory + ": Windows has no NVIDIA driver with WSL support");
}

}  // namespace

std::optional<std::string> driver_version_from_library_name(std::string_view file_name) {
  for (const std::string_view prefix : {"libcuda.so.", "libnvidia-ml.so."}) {
    if (!text::starts_with(file_name, prefix)) continue;
    const auto rest = file_name.substr(prefix.size());
    const auto version = Version::parse(rest);
    if (version && version->size() >= 2) return std::string(rest);
  }
  return std::nullopt;
}

DriverReading probe_driver(const Sysroot& sysroot, LibraryLoader& loader) {
  DriverReading reading;
  if (probe_wsl(sysroot).wsl2) {
    read_wsl_driver(sysroot, loader, reading);
    if (reading.driver && reading.driver->version.empty()) reading.driver.reset();
    return reading;
  }
  read_nvml(loader, "libnvidia-ml.so.1", reading);
  read_cuda_driver_api(loader, "libcuda.so.1", reading);
  if (!reading.driver || reading.driver->version.empty()) {
    read_kernel_module_version(sysroot, reading);
  }
  if (!reading.driver || reading.driver->version.empty()) {
    read_installed_library_version(sysroot, reading);
  }
  // libcuda can be present (a container's stub, a half-removed driver) with no kernel driver:
  // a CUDA version but no driver version is not a working driver.
  if (reading.driver && reading.driver->version.empty()) {
    reading.notes.push_back(reading.driver->library +
                            " answers, but no NVIDIA kernel driver version could be read");
    reading.driver.reset();
  }
  if (reading.driver) read_kernel_module_flavour(sysroot, *reading.driver);
  return reading;
}

}  // namespace cudaenv::probe
