// The program `cudaenv verify` builds with the toolkit under test and runs on this machine. It is
// compiled into cudaenv's binary as text and written to the build cache at verify time.
//
// Output: one fact per line, "<kind> key=value ...", read by src/verify/program_output.cpp. A
// key named "name" or "message" is always last and takes the rest of the line (GPU names and
// CUDA's error strings hold spaces); no other value holds a space. Every CUDA call is checked; a failure prints
//   error call=<function> code=<number> error_name=<cudaGetErrorName>
//         message=<cudaGetErrorString>
// (on one line)
// and the program exits non-zero after the first error that stops it.
//
// Usage: device_query [--elements N] [--cudnn LIBRARY]

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

bool check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return true;
  std::printf("error call=%s code=%d error_name=%s message=%s\n", call,
              static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status));
  return false;
}

// A function of the index that is cheap on both sides and differs for every element, so a kernel
// that skipped, repeated or mixed up blocks cannot match by accident. Unsigned arithmetic wraps
// identically on host and device, so the comparison is exact.
__host__ __device__ unsigned int expected_value(unsigned int input, unsigned int index) {
  return input * 2654435761u + (index ^ 0x5bd1e995u);
}

__global__ void transform(const unsigned int* input, unsigned int* output, size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    output[i] = expected_value(input[i], static_cast<unsigned int>(i));
  }
}

struct Options {
  size_t elements = size_t{1} << 24;  // 16 Mi elements, 64 MiB per buffer
  const char* cudnn = nullptr;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--elements") == 0) {
      options.elements = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--cudnn") == 0) {
      options.cudnn = argv[i + 1];
    }
  }
  return options;
}

void report_versions() {
  int driver = 0;
  int runtime = 0;
  // cudaDriverGetVersion succeeds with 0 when no driver is installed.
  if (check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion") &&
      check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion")) {
    std::printf("versions driver=%d runtime=%d\n", driver, runtime);
  }
}

// cuDNN is loaded at run time so the program builds without its headers and reports a missing
// library as a fact instead of failing to start.
void report_cudnn(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::printf("cudnn status=unloadable message=%s\n", dlerror());
    return;
  }
  using GetVersion = size_t (*)();
  auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "cudnnGetVersion"));
  if (get_version == nullptr) {
    std::printf("cudnn status=unloadable message=no cudnnGetVersion in %s\n", library);
  } else {
    std::printf("cudnn status=loaded version=%zu\n", get_version());
  }
  dlclose(handle);
}

bool report_device(int device) {
  cudaDeviceProp properties;
  if (!check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties")) {
    return false;
  }
  std::printf("gpu index=%d cc=%d.%d sms=%d memory=%zu name=%s\n", device, properties.major,
              properties.minor, properties.multiProcessorCount, properties.totalGlobalMem,
              properties.name);
  return true;
}

// Buffers freed on every path out of the checks below. A failure here is printed too; the first
// error printed is the one that stopped the check.
struct DeviceBuffers {
  unsigned int* input = nullptr;
  unsigned int* output = nullptr;
  ~DeviceBuffers() {
    if (input != nullptr) check(cudaFree(input), "cudaFree");
    if (output != nullptr) check(cudaFree(output), "cudaFree");
  }
};

bool compare(int device, const std::vector<unsigned int>& input,
             const std::vector<unsigned int>& output) {
  size_t mismatches = 0;
  size_t first = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    if (output[i] != expected_value(input[i], static_cast<unsigned int>(i))) {
      if (mismatches++ == 0) first = i;
    }
  }
  if (mismatches == 0) {
    std::printf("kernel gpu=%d status=ok elements=%zu\n", device, input.size());
    return true;
  }
  std::printf("kernel gpu=%d status=mismatch elements=%zu mismatches=%zu first_index=%zu "
              "expected=%u got=%u\n",
              device, input.size(), mismatches, first,
              expected_value(input[first], static_cast<unsigned int>(first)), output[first]);
  return false;
}

// Device-to-device copy rate, counting bytes read plus bytes written as NVIDIA's bandwidthTest
// does. A sanity figure: a GPU far below its class points at a throttled or faulty device.
bool report_bandwidth(int device, const DeviceBuffers& buffers, size_t bytes) {
  constexpr int repeats = 50;
  cudaEvent_t start;
  cudaEvent_t stop;
  if (!check(cudaEventCreate(&start), "cudaEventCreate")) return false;
  if (!check(cudaEventCreate(&stop), "cudaEventCreate")) return false;
  bool ok = check(cudaMemcpy(buffers.output, buffers.input, bytes, cudaMemcpyDeviceToDevice),
                  "cudaMemcpy") &&
            check(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; ok && i < repeats; ++i) {
    ok = check(cudaMemcpy(buffers.output, buffers.input, bytes, cudaMemcpyDeviceToDevice),
               "cudaMemcpy");
  }
  float milliseconds = 0;
  ok = ok && check(cudaEventRecord(stop), "cudaEventRecord") &&
       check(cudaEventSynchronize(stop), "cudaEventSynchronize") &&
       check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
  if (ok && milliseconds > 0) {
    const double gigabytes = 2.0 * static_cast<double>(bytes) * repeats / 1e9;
    std::printf("bandwidth gpu=%d device_to_device_gbs=%.1f bytes=%zu repeats=%d\n", device,
                gigabytes / (milliseconds / 1e3), bytes, repeats);
  }
  ok = check(cudaEventDestroy(start), "cudaEventDestroy") && ok;
  ok = check(cudaEventDestroy(stop), "cudaEventDestroy") && ok;
  return ok;
}

bool run_kernel(int device, size_t elements) {
  if (!check(cudaSetDevice(device), "cudaSetDevice")) return false;
  std::vector<unsigned int> input(elements);
  std::vector<unsigned int> output(elements, 0);
  for (size_t i = 0; i < elements; ++i) input[i] = static_cast<unsigned int>(i * 7919u + 17u);
  const size_t bytes = elements * sizeof(unsigned int);
  DeviceBuffers buffers;
  if (!check(cudaMalloc(&buffers.input, bytes), "cudaMalloc") ||
      !check(cudaMalloc(&buffers.output, bytes), "cudaMalloc") ||
      !check(cudaMemcpy(buffers.input, input.data(), bytes, cudaMemcpyHostToDevice),
             "cudaMemcpy")) {
    return false;
  }
  transform<<<1024, 256>>>(buffers.input, buffers.output, elements);
  // A missing kernel image is reported at launch; a fault inside the kernel at synchronize.
  if (!check(cudaGetLastError(), "transform<<<1024,256>>>") ||
      !check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") ||
      !check(cudaMemcpy(output.data(), buffers.output, bytes, cudaMemcpyDeviceToHost),
             "cudaMemcpy")) {
    return false;
  }
  return compare(device, input, output) && report_bandwidth(device, buffers, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  report_versions();
  if (options.cudnn != nullptr) report_cudnn(options.cudnn);
  int count = 0;
  if (!check(cudaGetDeviceCount(&count), "cudaGetDeviceCount")) return 1;
  std::printf("devices count=%d\n", count);
  bool ok = true;
  for (int device = 0; device < count; ++device) {
    ok = report_device(device) && run_kernel(device, options.elements) && ok;
  }
  std::printf("done status=%s\n", ok ? "ok" : "failed");
  return ok ? 0 : 1;
}
