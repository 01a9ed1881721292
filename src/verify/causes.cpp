#include "verify/causes.hpp"

#include <regex>

#include "activate/host_compiler.hpp"
#include "core/text.hpp"
#include "forward/decision.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::verify::causes {

namespace {

std::string compute_name(const Version& cc) {
  return "compute_" + std::to_string(cc.major()) + std::to_string(cc.minor());
}

std::string toolkit_name(const ClassifyContext& context) { return "CUDA " + context.toolkit.str(); }

// "nvidia-driver-580": the Ubuntu package of the oldest branch that runs this toolkit.
std::string driver_package(const ClassifyContext& context) {
  const auto* branch = context.db.branch_for(context.toolkit);
  return branch == nullptr ? std::string() : branch->package;
}

std::string install_driver_fix(const ClassifyContext& context) {
  const auto package = driver_package(context);
  return "install the NVIDIA driver" +
         (package.empty() ? std::string()
                          : " (Debian/Ubuntu: sudo apt install " + package + " or newer, for " +
                                toolkit_name(context) + ")") +
         "; in a container, start it with the host's GPUs (docker run --gpus all)";
}

// The first line of a tool's output that says what went wrong.
std::string first_error_line(const std::string& output) {
  for (const auto& line : text::lines(output)) {
    if (text::contains(line, "error") || text::contains(line, "fatal")) {
      return std::string(text::trim(line));
    }
  }
  const auto all = text::lines(output);
  return all.empty() ? std::string("no output") : std::string(text::trim(all.front()));
}

// A host compiler no newer than `max_major` from the probed list, preferring the C++ driver
// (g++-12 over gcc-12) and the newest version.
const probe::CompilerFacts* supported_compiler(const ClassifyContext& context,
                                               const std::string& family, int max_major) {
  const probe::CompilerFacts* best = nullptr;
  for (const auto& compiler : context.compilers) {
    if (compiler.family != family || !compiler.version || compiler.version->major() > max_major) {
      continue;
    }
    const bool cxx = text::contains(compiler.name, "++");
    const bool best_cxx = best != nullptr && text::contains(best->name, "++");
    if (best == nullptr || *compiler.version > *best->version ||
        (*compiler.version == *best->version && cxx && !best_cxx)) {
      best = &compiler;
    }
  }
  return best;
}

std::optional<Version> default_compiler_version(const ClassifyContext& context,
                                                const std::string& name) {
  for (const auto& compiler : context.compilers) {
    if (compiler.name == name) return compiler.version;
  }
  return std::nullopt;
}

// nvcc's own words carry the limit: "gcc versions later than 15 are not supported", "clang
// version must be less than 15". The database is the fallback.
int compiler_limit(const ClassifyContext& context, std::string_view output, bool clang) {
  static const std::regex gcc_limit(R"(gcc versions later than ([0-9]+))");
  static const std::regex clang_limit(R"(clang version must be less than ([0-9]+))");
  const std::string text(output);
  std::smatch match;
  if (std::regex_search(text, match, clang ? clang_limit : gcc_limit)) {
    const int limit = std::stoi(match[1].str());
    return clang ? limit - 1 : limit;
  }
  const auto* row = context.db.host_compiler(context.toolkit);
  if (row == nullptr) return 0;
  return clang ? row->clang_max : row->gcc_max;
}

std::string arch_fix(const ClassifyContext& context, const Version& gpu) {
  const auto sm = resolve::sm_name(gpu);
  const auto* arch = context.db.arch(gpu);
  if (arch == nullptr) {
    return toolkit_name(context) + " and cudaenv's database do not know compute capability " +
           gpu.str() + ": use the newest toolkit ('cudaenv resolve' names it)";
  }
  if (!toolkit_targets(*arch, context.toolkit)) {
    const auto range = arch->last_cuda
                           ? "CUDA " + arch->first_cuda.str() + " to " + arch->last_cuda->str()
                           : "CUDA " + arch->first_cuda.str() + " or newer";
    const auto pick = arch->last_cuda ? *arch->last_cuda : arch->first_cuda;
    return toolkit_name(context) + " cannot build for " + sm + " (" + arch->name + "); " + range +
           " can: cudaenv install " + pick.str() + " && cudaenv verify " + pick.str();
  }
  const auto compute = compute_name(gpu);
  std::string fix = "build for it: nvcc -gencode arch=" + compute + ",code=" + sm + " (" +
                    toolkit_name(context) + " targets " + sm +
                    "), or ship PTX the driver compiles at start-up: -gencode arch=" + compute +
                    ",code=" + compute;
  if (context.archs.source == "only-arch") {
    fix += "; plain 'cudaenv verify' (without --only-arch/--no-ptx) builds for the GPUs present";
  }
  return fix;
}

}  // namespace

std::string describe(const CudaErrorLine& error) {
  return error.call + " failed with " + error.name + " (" + std::to_string(error.code) +
         "): " + error.message;
}

Cause no_driver(const ClassifyContext& context, const std::string& evidence,
                std::string_view error_name) {
  if (!context.driver) {
    return {CauseId::no_driver, "no NVIDIA driver on this machine: " + evidence,
            install_driver_fix(context)};
  }
  const auto& driver = *context.driver;
  if (!driver.loaded) {
    return {CauseId::no_driver,
            "NVIDIA driver " + driver.version +
                " is installed but its kernel module is not "
                "loaded: " +
                evidence,
            "load it: sudo modprobe nvidia; if that fails, the module was not built for this "
            "kernel (reinstall the driver package so DKMS rebuilds it) or Secure Boot refuses "
            "it (enroll the driver's signing key or disable Secure Boot)"};
  }
  if (error_name == "cudaErrorSystemDriverMismatch") {
    return {CauseId::no_driver,
            "the driver's library and its kernel module differ in version: " + evidence,
            "reboot after the driver update, or reload the modules: sudo rmmod nvidia_uvm "
            "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"};
  }
  if (context.cuda_visible_devices) {
    return {CauseId::no_driver, "no GPU visible to this process: " + evidence,
            "CUDA_VISIBLE_DEVICES=\"" + *context.cuda_visible_devices +
                "\" hides the GPUs: unset it or set it to a GPU index such as 0"};
  }
  return {CauseId::no_driver,
          "NVIDIA driver " + driver.version +
              " is loaded but this process cannot use a GPU: " + evidence,
          "check that /dev/nvidia* and /dev/nvidia-uvm exist and are readable by this user (the "
          "video or render group; sudo modprobe nvidia_uvm creates the latter), and in a "
          "container that it was started with the GPUs (docker run --gpus all)"};
}

Cause forward_compat_failed(const ClassifyContext& context, const std::string& evidence) {
  if (!context.forward_compat)
    return {CauseId::forward_compat_failed,
            "forward compatibility was attempted on a GPU it does not run on: " + evidence,
            "take the cuda-compat directory off LD_LIBRARY_PATH (and out of /etc/ld.so.conf.d) "
            "and upgrade the driver instead; it runs only on data-center GPUs"};
  const auto& library = *context.forward_compat;
  std::vector<std::string> names;
  for (const auto& gpu : context.gpus) names.push_back(gpu.name);
  const auto decision = forward::decide(
      library, context.driver ? std::optional<std::string>(context.driver->version) : std::nullopt,
      names, [&](const std::string& gpu) {
        const auto* model = context.db.model_of_device(gpu);
        return model != nullptr && model->datacenter;
      });
  const auto dir = library.directory.string();
  const auto why =
      decision.use() ? "it should run here, so the library itself may be damaged" : decision.reason;
  return {CauseId::forward_compat_failed,
          "the forward-compatibility library in " + dir + " (libcuda " + library.version +
              ") was loaded first: " + why + "; " + evidence,
          "take " + dir +
              " off LD_LIBRARY_PATH (the system's driver then serves; cudaenv puts a store copy "
              "first only where it runs: cudaenv doctor says which)"};
}

Cause driver_too_old(const ClassifyContext& context, const std::string& evidence) {
  const auto* release = release_for(context.db, context.toolkit);
  const auto installed = context.driver
                             ? "driver " + context.driver->version +
                                   (context.driver->cuda_version
                                        ? " (CUDA <= " + context.driver->cuda_version->str() + ")"
                                        : std::string())
                             : std::string("the driver");
  std::string fix = "upgrade the NVIDIA driver";
  if (release != nullptr) {
    const auto check = resolve::check_driver(context.db, *release, std::nullopt);
    if (check.full_minimum) fix += " to >= " + check.full_minimum->str();
    fix += " for CUDA " + release->version.str();
    if (check.compat_floor) {
      fix += " (>= " + check.compat_floor->str() + " runs it with minor-version compatibility)";
    }
  }
  const auto package = driver_package(context);
  if (!package.empty()) fix += "; Debian/Ubuntu: sudo apt install " + package;
  if (context.driver && context.driver->cuda_version) {
    fix += "; or verify a toolkit this driver runs: cudaenv verify " +
           context.driver->cuda_version->str();
  }
  return {CauseId::driver_too_old,
          installed + " is older than the " + toolkit_name(context) + " runtime needs: " + evidence,
          fix};
}

std::string build_contents(const ArchPlan& archs) {
  std::vector<std::string> sms;
  for (const auto& cc : archs.sass) sms.push_back(resolve::sm_name(cc));
  return "machine code for " + (sms.empty() ? std::string("nothing") : text::join(sms, " ")) +
         (archs.ptx ? " and PTX " + compute_name(*archs.ptx) : std::string(" and no PTX"));
}

Cause no_kernel_image(const ClassifyContext& context, const std::optional<Version>& gpu,
                      std::string message) {
  return {CauseId::no_kernel_image, std::move(message),
          gpu ? arch_fix(context, *gpu)
              : "build for the GPU's architecture: nvcc -gencode arch=compute_XY,code=sm_XY"};
}

Cause host_compiler_unsupported(const ClassifyContext& context, std::string_view nvcc_output) {
  const bool clang = text::contains(nvcc_output, "unsupported clang version");
  const std::string family = clang ? "clang" : "gcc";
  const int limit = compiler_limit(context, nvcc_output, clang);
  const auto current = default_compiler_version(context, family);
  const auto newest = family + " " + std::to_string(limit);
  std::string message = "nvcc (" + toolkit_name(context) + ") refuses the host compiler " + family +
                        (current ? " " + current->str() : std::string()) + ": it supports " +
                        family + " <= " + std::to_string(limit);
  const auto* usable = supported_compiler(context, family, limit);
  const std::string last_resort =
      "; or, at your own risk, NVCC_APPEND_FLAGS=-allow-unsupported-compiler";
  if (usable != nullptr) {
    return {CauseId::host_compiler_unsupported, message,
            family + " " + usable->version->str() + " is installed: NVCC_PREPEND_FLAGS='-ccbin " +
                usable->path + "' cudaenv verify (nvcc 11.8 ignores NVCC_CCBIN; -ccbin " +
                usable->path + " in a build)" + last_resort};
  }
  const auto package = clang ? "clang-" + std::to_string(limit) : "g++-" + std::to_string(limit);
  return {CauseId::host_compiler_unsupported, message,
          "no " + family + " <= " + std::to_string(limit) + " is installed: install " + newest +
              " (Debian/Ubuntu: sudo apt install " + package +
              "); cudaenv then hands it to nvcc and CMake by itself" + last_resort};
}

Cause glibc_headers_clash(const ClassifyContext& context, std::string_view nvcc_output) {
  static const std::regex function(R"re(previous function "([A-Za-z0-9_]+)")re");
  const std::string output(nvcc_output);
  std::smatch match;
  const auto name = std::regex_search(output, match, function) ? match[1].str() : "cospi";
  std::string message = "the headers of " + toolkit_name(context) +
                        " clash with this glibc's <math.h>: nvcc stops at \"" + name +
                        "\" (exception specification is incompatible)";
  const auto* limit = context.db.glibc_limit(context.toolkit);
  if (limit != nullptr)
    message += "; they accept glibc <= " + limit->glibc_max.str() + " (" + limit->clash + ")";
  const std::string newer = limit != nullptr && limit->fixed_in
                                ? "use CUDA " + limit->fixed_in->major_minor().str() +
                                      " or newer, whose headers accept it (cudaenv install " +
                                      limit->fixed_in->major_minor().str() + ")"
                                : "use a newer CUDA release whose headers accept it";
  return {CauseId::glibc_headers_clash, message,
          newer + "; or build against glibc <= " +
              (limit != nullptr ? limit->glibc_max.str() : std::string("2.40")) +
              " headers (a container or sysroot of Debian 12 or Ubuntu 24.04)"};
}

Cause cudart_missing(const ClassifyContext& context, const std::string& loader_message) {
  return {CauseId::cudart_mismatch, "the program could not start: " + loader_message,
          "the program uses the toolkit's shared CUDA runtime, which the loader looks for in " +
              context.toolkit_path +
              "/lib64 first: the toolkit there lacks libcudart.so (reinstall its cuda_cudart "
              "component), or the library's directory is missing from LD_LIBRARY_PATH"};
}

Cause cudart_other_version(const ClassifyContext& context, int runtime_version) {
  return {CauseId::cudart_mismatch,
          "the program was built with " + toolkit_name(context) + " but loaded the CUDA " +
              Version::from_cuda_int(runtime_version).str() + " runtime",
          "another libcudart.so comes before " + context.toolkit_path +
              "/lib64: remove other toolkits' directories from LD_LIBRARY_PATH ('cudaenv info' "
              "lists them) and from /etc/ld.so.conf.d, then run sudo ldconfig"};
}

Cause out_of_memory(const std::string& evidence) {
  return {CauseId::out_of_memory, "the GPU has no room for the test buffers: " + evidence,
          "other processes hold the GPU's memory (nvidia-smi lists them): stop them, or pick "
          "another GPU with CUDA_VISIBLE_DEVICES"};
}

Cause wrong_result(const GpuReport& gpu) {
  const auto& kernel = *gpu.kernel;
  return {CauseId::wrong_result,
          "GPU " + std::to_string(gpu.index) + " (" + gpu.name + ") computed " +
              std::to_string(kernel.mismatches) + " of " + std::to_string(kernel.elements) +
              " elements wrong; the first at index " + std::to_string(kernel.first_index) +
              ": expected " + kernel.expected + ", got " + kernel.got,
          "a kernel that built and ran gave wrong answers: suspect the GPU or the driver. Look "
          "for Xid errors (sudo dmesg | grep -i xid) and ECC errors (nvidia-smi -q -d ECC), "
          "reset the GPU (sudo nvidia-smi -r) or reinstall the driver, and do not trust the "
          "GPU until verify passes"};
}

Cause compile_failed(const ClassifyContext& context, const ProcessResult& compile) {
  const auto output = compile.err + compile.out;
  if (compile.timed_out) {
    return {CauseId::compile_failed, "nvcc did not finish in time",
            "the machine may be overloaded; run cudaenv verify again"};
  }
  const auto line = first_error_line(output);
  const auto message = "nvcc failed (exit " + std::to_string(compile.exit_code) + "): " + line;
  if (text::contains(output, "Failed to preprocess host compiler properties") ||
      text::contains(output, "gcc: No such file or directory")) {
    // NVCC_CCBIN is read from CUDA 12.5 on; older nvcc takes -ccbin only (docs/host-compiler.md).
    const std::string name_one = activate::honours_nvcc_ccbin(context.toolkit.str())
                                     ? "point NVCC_CCBIN at one"
                                     : "name one with NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-N' "
                                       "(nvcc " +
                                           context.toolkit.major_minor().str() +
                                           " ignores NVCC_CCBIN)";
    return {CauseId::compile_failed, message,
            "nvcc found no host C++ compiler: install one (Debian/Ubuntu: sudo apt install g++) "
            "or " +
                name_one};
  }
  return {CauseId::compile_failed, message,
          "a toolkit that cannot compile this small program is damaged or incomplete: reinstall "
          "it; nvcc's full output is in 'cudaenv verify --json' (build.output)"};
}

Cause runtime_error(const std::string& evidence) {
  return {CauseId::runtime_error, evidence,
          "cudaenv has no specific fix for this error; the CUDA runtime's message above names "
          "it, and 'cudaenv info' shows the driver and GPUs this process sees"};
}

}  // namespace cudaenv::verify::causes
