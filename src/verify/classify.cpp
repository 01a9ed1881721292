#include "verify/classify.hpp"

#include <regex>

#include "core/text.hpp"
#include "resolve/rules.hpp"
#include "verify/causes.hpp"

namespace cudaenv::verify {

namespace {

// The CUDA runtime's error names (cudaGetErrorName) and numbers, as the program prints them.
// Numbers and strings as captured on real machines: docs/examples/gpu-runtime-errors-h200.txt and
// docs/examples/verify-captures-cpu.txt.
struct RuntimeErrorRule {
  std::string_view name;
  int code;
  CauseId cause;
};
constexpr RuntimeErrorRule runtime_error_rules[] = {
    {"cudaErrorInsufficientDriver", 35, CauseId::driver_too_old},  // also: no libcuda at all
    {"cudaErrorNoDevice", 100, CauseId::no_driver},
    {"cudaErrorInitializationError", 3, CauseId::no_driver},
    {"cudaErrorSystemDriverMismatch", 803, CauseId::no_driver},  // or forward_compat_failed
    {"cudaErrorCompatNotSupportedOnDevice", 804, CauseId::forward_compat_failed},
    {"cudaErrorNoKernelImageForDevice", 209, CauseId::no_kernel_image},
    {"cudaErrorUnsupportedPtxVersion", 222, CauseId::driver_too_old},
    {"cudaErrorMemoryAllocation", 2, CauseId::out_of_memory},
};

// Phrases in free text: nvcc's and the loader's output, the frameworks' exceptions (which quote
// the runtime's strings or word their own).
struct TextRule {
  std::string_view phrase;
  CauseId cause;
};
constexpr TextRule text_rules[] = {
    {"unsupported GNU version", CauseId::host_compiler_unsupported},
    {"unsupported clang version", CauseId::host_compiler_unsupported},
    // glibc >= 2.41 declares C23's sinpi/cospi (2.42: rsqrt) noexcept; older CUDA headers not.
    {"exception specification is incompatible with that of previous function",
     CauseId::glibc_headers_clash},
    {"Unsupported gpu architecture", CauseId::no_kernel_image},
    {"no kernel image is available", CauseId::no_kernel_image},
    {"CUDA driver version is insufficient", CauseId::driver_too_old},
    {"driver on your system is too old", CauseId::driver_too_old},  // PyTorch's wording
    {"no CUDA-capable device is detected", CauseId::no_driver},
    {"Found no NVIDIA driver", CauseId::no_driver},  // PyTorch's wording
    // The runtime's strings for 803 and 804, as frameworks quote them.
    {"system has unsupported display driver / cuda driver combination", CauseId::no_driver},
    {"forward compatibility was attempted on non supported HW", CauseId::forward_compat_failed},
    {"error while loading shared libraries: libcudart", CauseId::cudart_mismatch},
    {"out of memory", CauseId::out_of_memory},
};

std::optional<CauseId> runtime_rule(const CudaErrorLine& error) {
  for (const auto& rule : runtime_error_rules) {
    if (error.name == rule.name || (error.name.empty() && error.code == rule.code)) {
      return rule.cause;
    }
  }
  return std::nullopt;
}

// "nvcc fatal : Unsupported gpu architecture 'compute_35'" -> 3.5; "compute_100" -> 10.0.
std::optional<Version> architecture_in(std::string_view text) {
  static const std::regex named(R"((?:compute|sm)_([0-9]+)([0-9]))");
  const std::string copy(text);
  std::smatch match;
  if (!std::regex_search(copy, match, named)) return std::nullopt;
  return Version::parse(match[1].str() + "." + match[2].str());
}

// The GPU an error happened on, from the program's own report, else from probe (the first GPU,
// where the program stops): its compute capability, and its name for people.
std::pair<std::optional<Version>, std::string> gpu_of(const CudaErrorLine& error,
                                                      const Evidence& evidence,
                                                      const ClassifyContext& context) {
  for (const auto& gpu : evidence.program.gpus) {
    if (error.gpu && gpu.index == *error.gpu) {
      return {gpu.compute_capability, "GPU " + std::to_string(gpu.index) + " (" + gpu.name + ", " +
                                          resolve::sm_name(gpu.compute_capability) + ")"};
    }
  }
  if (!context.gpus.empty()) {
    const auto& gpu = context.gpus.front();
    return {gpu.compute_capability,
            gpu.name + " (" + resolve::sm_name(gpu.compute_capability) + ")"};
  }
  return {std::nullopt, "this GPU"};
}

Cause from_runtime_error(const CudaErrorLine& error, const Evidence& evidence,
                         const ClassifyContext& context) {
  const auto evidence_text = causes::describe(error);
  const auto cause = runtime_rule(error);
  if (!cause) return causes::runtime_error(evidence_text);
  switch (*cause) {
    case CauseId::driver_too_old:
      // With no libcuda at all the runtime reports the same "insufficient driver" (35): probe
      // tells the two apart.
      if (!context.driver || !context.driver->loaded) {
        return causes::no_driver(context, evidence_text, error.name);
      }
      return causes::driver_too_old(context, evidence_text);
    case CauseId::no_driver:
      if (error.name == "cudaErrorSystemDriverMismatch" && context.forward_compat)
        return causes::forward_compat_failed(context, evidence_text);
      return causes::no_driver(context, evidence_text, error.name);
    case CauseId::forward_compat_failed:
      return causes::forward_compat_failed(context, evidence_text);
    case CauseId::no_kernel_image: {
      const auto [cc, label] = gpu_of(error, evidence, context);
      return causes::no_kernel_image(context, cc,
                                     "no kernel image for " + label + ": the program holds " +
                                         causes::build_contents(context.archs) + "; " +
                                         evidence_text);
    }
    case CauseId::out_of_memory: return causes::out_of_memory(evidence_text);
    default: return causes::runtime_error(evidence_text);
  }
}

std::optional<Cause> from_compile(const ProcessResult& compile, const ClassifyContext& context) {
  if (compile.succeeded()) return std::nullopt;
  const auto output = compile.err + compile.out;
  const auto named = compile.timed_out ? std::nullopt : cause_named_in(output);
  if (named == CauseId::host_compiler_unsupported) {
    return causes::host_compiler_unsupported(context, output);
  }
  if (named == CauseId::glibc_headers_clash) return causes::glibc_headers_clash(context, output);
  if (named == CauseId::no_kernel_image) {
    const auto lines = text::lines(output);
    return causes::no_kernel_image(
        context, architecture_in(output),
        "nvcc (CUDA " + context.toolkit.str() +
            ") cannot build for this GPU: " + (lines.empty() ? output : lines.front()));
  }
  return causes::compile_failed(context, compile);
}

// The loader's own line, e.g. "./device_query: error while loading shared libraries:
// libcudart.so.13: cannot open shared object file: No such file or directory".
std::optional<std::string> loader_failure(const ProcessResult& run) {
  for (const auto& line : text::lines(run.err)) {
    if (text::contains(line, "error while loading shared libraries") ||
        text::contains(line, "symbol lookup error")) {
      return line;
    }
  }
  return std::nullopt;
}

std::optional<Cause> from_program(const ProcessResult& run, const Evidence& evidence,
                                  const ClassifyContext& context) {
  const auto& program = evidence.program;
  if (auto loader = loader_failure(run)) return causes::cudart_missing(context, *loader);
  if (program.runtime_version && *program.runtime_version != 0 &&
      Version::from_cuda_int(*program.runtime_version) != context.toolkit.major_minor()) {
    return causes::cudart_other_version(context, *program.runtime_version);
  }
  if (!program.errors.empty()) return from_runtime_error(program.errors.front(), evidence, context);
  for (const auto& gpu : program.gpus) {
    if (gpu.kernel && !gpu.kernel->ok) return causes::wrong_result(gpu);
  }
  if (program.device_count == 0) {
    return causes::no_driver(context, "cudaGetDeviceCount found no device", "cudaErrorNoDevice");
  }
  if (run.timed_out) return causes::runtime_error("the program did not finish in time");
  if (!run.succeeded() || !program.finished_ok) {
    const auto lines = text::lines(run.err);
    return causes::runtime_error("the program exited with status " + std::to_string(run.exit_code) +
                                 (lines.empty() ? std::string() : ": " + lines.back()));
  }
  return std::nullopt;
}

std::optional<Cause> from_cudnn(const ProgramReport& program, const ClassifyContext& context) {
  if (!context.cudnn_library || !program.cudnn) return std::nullopt;
  const auto& cudnn = *program.cudnn;
  if (!cudnn.loaded) {
    return Cause{CauseId::cudnn_unloadable,
                 "cuDNN " + *context.cudnn_library + " could not be loaded: " + cudnn.message,
                 "its companion libraries (libcudnn_*.so) must sit beside it; reinstall that "
                 "cuDNN, or name a directory holding a complete one with --cudnn"};
  }
  if (context.cudnn_expected && cudnn.version != context.cudnn_expected) {
    return Cause{CauseId::cudnn_mismatch,
                 "cudnnGetVersion() says " + std::to_string(cudnn.version.value_or(0)) +
                     " but the headers beside the library say " +
                     std::to_string(*context.cudnn_expected),
                 "the cuDNN directory mixes two versions: reinstall it"};
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(CauseId id) {
  switch (id) {
    case CauseId::no_driver: return "no_driver";
    case CauseId::driver_too_old: return "driver_too_old";
    case CauseId::no_kernel_image: return "no_kernel_image";
    case CauseId::host_compiler_unsupported: return "host_compiler_unsupported";
    case CauseId::glibc_headers_clash: return "glibc_headers_clash";
    case CauseId::cudart_mismatch: return "cudart_mismatch";
    case CauseId::out_of_memory: return "out_of_memory";
    case CauseId::wrong_result: return "wrong_result";
    case CauseId::compile_failed: return "compile_failed";
    case CauseId::runtime_error: return "runtime_error";
    case CauseId::cudnn_unloadable: return "cudnn_unloadable";
    case CauseId::cudnn_mismatch: return "cudnn_mismatch";
    case CauseId::framework_not_installed: return "framework_not_installed";
    case CauseId::framework_cpu_only: return "framework_cpu_only";
    case CauseId::forward_compat_failed: return "forward_compat_failed";
  }
  return "unknown";
}

std::optional<CauseId> cause_named_in(std::string_view text) {
  for (const auto& rule : text_rules) {
    if (text::contains(text, rule.phrase)) return rule.cause;
  }
  return std::nullopt;
}

Cause cause_from_text(CauseId id, const std::string& text, const ClassifyContext& context,
                      const std::optional<Version>& gpu) {
  switch (id) {
    case CauseId::no_driver:
      if (context.forward_compat && text::contains(text, "unsupported display driver"))
        return causes::forward_compat_failed(context, text);
      return causes::no_driver(context, text, "");
    case CauseId::forward_compat_failed: return causes::forward_compat_failed(context, text);
    case CauseId::driver_too_old:
      if (!context.driver || !context.driver->loaded) return causes::no_driver(context, text, "");
      return causes::driver_too_old(context, text);
    case CauseId::no_kernel_image: return causes::no_kernel_image(context, gpu, text);
    case CauseId::out_of_memory: return causes::out_of_memory(text);
    case CauseId::host_compiler_unsupported:
      return causes::host_compiler_unsupported(context, text);
    case CauseId::cudart_mismatch: return causes::cudart_missing(context, text);
    case CauseId::glibc_headers_clash: return causes::glibc_headers_clash(context, text);
    default: return causes::runtime_error(text);
  }
}

std::optional<Cause> classify(const Evidence& evidence, const ClassifyContext& context) {
  if (evidence.compile) {
    if (auto cause = from_compile(*evidence.compile, context)) return cause;
  }
  if (!evidence.run) return std::nullopt;
  if (auto cause = from_program(*evidence.run, evidence, context)) return cause;
  return from_cudnn(evidence.program, context);
}

const manifest::CudaRelease* release_for(const manifest::Database& db, const Version& toolkit) {
  for (const auto& release : db.cuda_releases) {
    if (release.version == toolkit) return &release;
  }
  for (const auto& release : db.cuda_releases) {
    if (release.nvcc && *release.nvcc == toolkit) return &release;
  }
  const manifest::CudaRelease* newest = nullptr;
  for (const auto& release : db.cuda_releases) {
    if (release.version.major_minor() == toolkit.major_minor()) newest = &release;
  }
  return newest;
}

}  // namespace cudaenv::verify
