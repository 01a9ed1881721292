#include "probe/cuda_env.hpp"

#include "core/text.hpp"

namespace cudaenv::probe {

namespace {

// Variables that change which CUDA a build or a program picks up.
constexpr const char* watched_variables[] = {
    "CUDA_HOME",           "CUDA_PATH",         "CUDA_ROOT",
    "CUDAToolkit_ROOT",    "CUDACXX",           "NVCC_CCBIN",
    "NVCC_PREPEND_FLAGS",  "NVCC_APPEND_FLAGS", "CUDA_VISIBLE_DEVICES",
    "CUDA_MODULE_LOADING", "CUDNN_PATH",        "CUDAENV_ROOT",
    "CUDAENV_VERSION",     "CUDAENV_ACTIVE",    "CUDAENV_SYSROOT",
    "CUDAENV_MIRROR"};

// Toolkit runtime libraries only: a directory with the driver's libcuda (the container
// toolkit's /usr/local/nvidia/lib64) is how a driver is meant to be found, not a stray toolkit.
bool holds_cuda_libraries(const Sysroot& sysroot, const std::string& directory) {
  for (const auto& name : sysroot.list_directory(directory)) {
    for (const char* stem : {"libcudart.so", "libcublas.so", "libcudnn.so", "libnvrtc.so"}) {
      if (text::starts_with(name, stem)) return true;
    }
  }
  return false;
}

}  // namespace

CudaEnvFacts probe_cuda_env(const Sysroot& sysroot, const Environment& env) {
  CudaEnvFacts facts;
  for (const char* name : watched_variables) {
    if (auto value = env.get(name)) facts.variables.push_back({name, *value});
  }
  for (const auto& entry : text::split(env.get("LD_LIBRARY_PATH").value_or(""), ':')) {
    if (!entry.empty() && holds_cuda_libraries(sysroot, entry)) {
      facts.cuda_library_paths.push_back(entry);
    }
  }
  return facts;
}

}  // namespace cudaenv::probe
