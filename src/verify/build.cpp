#include "verify/build.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::verify {

namespace fs = std::filesystem;

namespace {

// The program is small; nvcc's defaults apart from these. `-cudart shared` links the toolkit's
// libcudart.so instead of the static copy, so the runtime resolved at run time is the one the
// toolkit's environment provides (as for any program built there) and a missing or foreign
// cudart shows up. libdl comes after the source: cuDNN is loaded with dlopen, which lived
// outside libc before glibc 2.34, and a linker with --as-needed drops libraries named too early.
constexpr std::array<const char*, 3> nvcc_flags = {"-O2", "-cudart", "shared"};
constexpr const char* nvcc_libraries = "-ldl";

// Variables nvcc reads that change what it builds (host compiler, extra flags).
constexpr std::array<const char*, 3> nvcc_variables = {"NVCC_CCBIN", "NVCC_PREPEND_FLAGS",
                                                       "NVCC_APPEND_FLAGS"};

std::string compute_name(const Version& cc) {
  return "compute_" + std::to_string(cc.major()) + std::to_string(cc.minor());
}

// FNV-1a, 64 bits: a cache key needs spread, not secrecy.
std::string fnv1a_hex(std::string_view data) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : data) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  std::array<char, 17> out{};
  std::snprintf(out.data(), out.size(), "%016llx", static_cast<unsigned long long>(hash));
  return out.data();
}

Status write_file(const fs::path& path, const std::string& content) {
  return write_file_atomically(path, content);
}

}  // namespace

bool toolkit_targets(const manifest::GpuArch& arch, const Version& toolkit) {
  const auto series = toolkit.major_minor();
  return series >= arch.first_cuda && (!arch.last_cuda || series <= *arch.last_cuda);
}

ArchPlan plan_architectures(const manifest::Database& db, const Version& toolkit,
                            const std::vector<Version>& gpus, const ArchRequest& request) {
  ArchPlan plan;
  if (!request.only.empty()) {
    plan.sass = request.only;
    plan.source = "only-arch";
  } else if (!gpus.empty()) {
    plan.source = "gpus";
    for (const auto& gpu : gpus) {
      const auto fit = resolve::toolkit_arch_fit(db, toolkit, gpu);
      if (fit.kind == resolve::ArchFit::Kind::family) {
        plan.through_family.emplace_back(gpu, *fit.through);
        plan.sass.push_back(*fit.through);
      } else {
        plan.sass.push_back(gpu);  // native, or a failure nvcc names
      }
    }
  } else {
    plan.source = "default";
    // The database lists architectures oldest first.
    for (const auto& arch : db.gpu_archs) {
      if (toolkit_targets(arch, toolkit)) {
        plan.sass.push_back(arch.compute_capability);
        break;
      }
    }
  }
  std::sort(plan.sass.begin(), plan.sass.end());
  plan.sass.erase(std::unique(plan.sass.begin(), plan.sass.end()), plan.sass.end());
  if (!request.no_ptx && !plan.sass.empty()) plan.ptx = plan.sass.back();
  return plan;
}

std::vector<std::string> gencode_arguments(const ArchPlan& plan) {
  std::vector<std::string> arguments;
  for (const auto& cc : plan.sass) {
    arguments.emplace_back("-gencode");
    arguments.push_back("arch=" + compute_name(cc) + ",code=" + resolve::sm_name(cc));
  }
  if (plan.ptx) {
    arguments.emplace_back("-gencode");
    arguments.push_back("arch=" + compute_name(*plan.ptx) + ",code=" + compute_name(*plan.ptx));
  }
  return arguments;
}

std::string describe(const ArchPlan& plan) {
  std::vector<std::string> parts;
  for (const auto& cc : plan.sass) parts.push_back(resolve::sm_name(cc));
  std::string text = parts.empty() ? std::string("no architecture") : text::join(parts, " ");
  text += plan.ptx ? " + PTX " + compute_name(*plan.ptx) : std::string(", no PTX");
  for (const auto& [gpu, target] : plan.through_family) {
    text += " (" + resolve::sm_name(target) + " for the " + resolve::sm_name(gpu) +
            " GPU: the toolkit has no " + resolve::sm_name(gpu) +
            " target, and code for an older member of its family runs on it)";
  }
  return text;
}

std::string cache_key(const BuildSpec& spec) {
  std::string identity = spec.toolkit_path + '\n' + spec.toolkit_version + '\n';
  for (const auto& argument : gencode_arguments(spec.archs)) identity += argument + ' ';
  for (const char* flag : nvcc_flags) identity += std::string(flag) + ' ';
  identity += std::string(nvcc_libraries) + '\n';
  for (const char* variable : nvcc_variables) {
    const auto it = spec.environment.find(variable);
    identity += std::string(variable) + '=' +
                (it == spec.environment.end() ? std::string() : it->second) + '\n';
  }
  identity += spec.program;
  std::vector<std::string> targets;
  for (const auto& cc : spec.archs.sass) targets.push_back(resolve::sm_name(cc));
  if (spec.archs.ptx) targets.push_back(compute_name(*spec.archs.ptx));
  return spec.toolkit_version + "-" + text::join(targets, "+") + "-" + fnv1a_hex(identity);
}

Result<BuildResult> build_program(const BuildSpec& spec, const fs::path& cache_root,
                                  ProcessRunner& runner) {
  BuildResult result;
  const auto directory = cache_root / cache_key(spec);
  result.binary = directory / "device_query";
  if (is_executable_file(result.binary)) {
    result.cached = true;
    return result;
  }
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) {
    return make_error(ErrorKind::failure,
                      "cannot create " + directory.string() + ": " + error.message());
  }
  const auto source = directory / "device_query.cu";
  if (auto written = write_file(source, spec.program); !written) return written.error();
  const auto partial = directory / ("device_query.partial-" + std::to_string(::getpid()));
  result.command = {spec.toolkit_path + "/bin/nvcc"};
  for (const char* flag : nvcc_flags) result.command.emplace_back(flag);
  for (auto& argument : gencode_arguments(spec.archs)) result.command.push_back(argument);
  result.command.insert(result.command.end(),
                        {"-o", partial.string(), source.string(), nvcc_libraries});

  const auto start = std::chrono::steady_clock::now();
  auto compile = runner.run({result.command, spec.environment, std::chrono::minutes(5)});
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // An nvcc that cannot be started (a toolkit without its compiler) is a failed compile: the
  // toolkit is what is being verified, so this is a finding, not an error of cudaenv's.
  result.compile = compile
                       ? *compile
                       : ProcessResult{127, false, "", "error: " + compile.error().message + "\n"};
  if (result.compile->succeeded() && !is_executable_file(partial)) {
    // Reported as a failed compile, so the classifier names it.
    result.compile->exit_code = -1;
    result.compile->err +=
        "error: nvcc exited 0 but wrote no program at " + partial.string() + "\n";
  }
  if (!result.compile->succeeded()) {
    fs::remove(partial, error);
    return result;
  }
  fs::rename(partial, result.binary, error);
  if (error) {
    return make_error(ErrorKind::failure, "cannot move the program into " + directory.string() +
                                              ": " + error.message());
  }
  return result;
}

}  // namespace cudaenv::verify
