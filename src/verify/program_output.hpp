#pragma once
// Reading what the device-query program (device_query.cu) prints: one fact per line,
// "<kind> key=value ...", where a "name" or "message" key takes the rest of the line.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.hpp"

namespace cudaenv::verify {

// A CUDA call that failed, as cudaGetErrorName and cudaGetErrorString put it.
struct CudaErrorLine {
  std::string call;  // "cudaGetDeviceCount", "transform<<<1024,256>>>" (the kernel launch)
  int code = 0;      // 35
  std::string name;  // "cudaErrorInsufficientDriver"
  std::string message;
  std::optional<int> gpu;  // the device being checked when it failed; nullopt before any
};

struct KernelCheck {
  bool ok = false;
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t first_index = 0;  // the first wrong element, when there are mismatches
  std::string expected, got;
};

struct GpuReport {
  int index = 0;
  std::string name;
  Version compute_capability;
  int multiprocessors = 0;
  std::uint64_t memory_bytes = 0;
  std::optional<KernelCheck> kernel;
  std::optional<double> bandwidth_gbs;  // device-to-device, bytes read plus written
};

struct CudnnLoad {
  bool loaded = false;
  std::optional<long long> version;  // cudnnGetVersion(): 91900 for 9.19.0
  std::string message;               // the loader's message when it could not be loaded
};

struct ProgramReport {
  std::optional<int> driver_version;   // cudaDriverGetVersion: 13000; 0 when there is no driver
  std::optional<int> runtime_version;  // cudaRuntimeGetVersion of the cudart that was loaded
  std::optional<int> device_count;
  std::vector<GpuReport> gpus;
  std::vector<CudaErrorLine> errors;
  std::optional<CudnnLoad> cudnn;
  bool finished_ok = false;  // "done status=ok": every device passed
};

ProgramReport parse_program_output(std::string_view output);

// "index=0 cc=9.0 name=NVIDIA H200" -> {index: 0, cc: 9.0, name: "NVIDIA H200"}.
std::map<std::string, std::string> parse_fields(std::string_view fields);

}  // namespace cudaenv::verify
