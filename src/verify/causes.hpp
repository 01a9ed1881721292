#pragma once
// The message and fix of each cause, composed from the evidence and the machine's facts. Used by
// classify.cpp, which decides which cause applies.

#include <optional>
#include <string>
#include <string_view>

#include "verify/classify.hpp"

namespace cudaenv::verify::causes {

// "cudaGetDeviceCount failed with cudaErrorInsufficientDriver (35): CUDA driver version is ...".
std::string describe(const CudaErrorLine& error);

Cause no_driver(const ClassifyContext& context, const std::string& evidence,
                std::string_view error_name);
Cause driver_too_old(const ClassifyContext& context, const std::string& evidence);
// Error 803 with a forward-compatibility library loaded, or 804: why the library cannot run here
// (its note, the kernel module, the GPUs) and the way out.
Cause forward_compat_failed(const ClassifyContext& context, const std::string& evidence);
// "machine code for sm_80 and no PTX": what a build holds.
std::string build_contents(const ArchPlan& archs);
// `gpu`: the compute capability that has no image, when known; the fix is built from it.
Cause no_kernel_image(const ClassifyContext& context, const std::optional<Version>& gpu,
                      std::string message);
Cause host_compiler_unsupported(const ClassifyContext& context, std::string_view nvcc_output);
// nvcc's "exception specification is incompatible with that of previous function \"cospi\""
// with the glibc the database records the toolkit's headers stop at, and the fix.
Cause glibc_headers_clash(const ClassifyContext& context, std::string_view nvcc_output);
Cause cudart_missing(const ClassifyContext& context, const std::string& loader_message);
Cause cudart_other_version(const ClassifyContext& context, int runtime_version);
Cause out_of_memory(const std::string& evidence);
Cause wrong_result(const GpuReport& gpu);
Cause compile_failed(const ClassifyContext& context, const ProcessResult& compile);
Cause runtime_error(const std::string& evidence);

}  // namespace cudaenv::verify::causes
