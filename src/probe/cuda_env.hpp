#pragma once
// CUDA-related variables in the current environment, and LD_LIBRARY_PATH entries that hold CUDA
// toolkit libraries (libcudart, libcublas, libcudnn, libnvrtc): the usual source of "the wrong
// libcudart got loaded".

#include "core/environment.hpp"
#include "core/sysroot.hpp"
#include "probe/facts.hpp"

namespace cudaenv::probe {

CudaEnvFacts probe_cuda_env(const Sysroot& sysroot, const Environment& env);

}  // namespace cudaenv::probe
