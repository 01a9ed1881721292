// The classifier against real output. Every compiler message, loader message and CUDA error
// string below was captured from the real tools: docs/examples/verify-captures-cpu.txt (nvcc
// 13.0.88 and the device-query program on the CPU test machine) and
// docs/examples/gpu-runtime-errors-h200.txt (the CUDA 13.0 runtime on an H200, driver 580.159.04).
// Program lines are in device_query.cu's format around those strings.

#include <doctest/doctest.h>

#include "manifest/load.hpp"
#include "test_util.hpp"
#include "verify/classify.hpp"

using namespace cudaenv;
using namespace cudaenv::verify;

namespace {

const manifest::Database& db() { return test::embedded_database(); }

// --- captured text ---

constexpr const char* no_driver_run =  // CPU machine, no libcuda
    "versions driver=0 runtime=13000\n"
    "error call=cudaGetDeviceCount code=35 error_name=cudaErrorInsufficientDriver "
    "message=CUDA driver version is insufficient for CUDA runtime version\n";

constexpr const char* no_device_run =  // H200 machine, CUDA_VISIBLE_DEVICES empty
    "versions driver=13000 runtime=13000\n"
    "error call=cudaGetDeviceCount code=100 error_name=cudaErrorNoDevice "
    "message=no CUDA-capable device is detected\n";

constexpr const char* h200_gpu =
    "gpu index=0 cc=9.0 sms=132 memory=150109880320 name=NVIDIA H200\n";

constexpr const char* no_kernel_image_error =  // H200 machine, sm_80 machine code only
    "error call=transform<<<1024,256>>> code=209 error_name=cudaErrorNoKernelImageForDevice "
    "message=no kernel image is available for execution on the device\n";

constexpr const char* gcc_too_new =  // nvcc 13.0.88, crt/host_config.h
    "In file included from /usr/local/cuda/bin/../targets/x86_64-linux/include/cuda_runtime.h:82,\n"
    "                 from <command-line>:\n"
    "/usr/local/cuda/bin/../targets/x86_64-linux/include/crt/host_config.h:137:2: error: #error "
    "-- unsupported GNU version! gcc versions later than 15 are not supported! The nvcc flag "
    "'-allow-unsupported-compiler' can be used to override this version check; however, using "
    "an unsupported host compiler may cause compilation failure or incorrect run time "
    "execution. Use at your own risk.\n";

constexpr const char* loader_no_cudart =
    "./device_query: error while loading shared libraries: libcudart.so.13: cannot open shared "
    "object file: No such file or directory\n";

// --- building the inputs ---

probe::DriverFacts driver(const char* version, const char* cuda, bool loaded = true) {
  probe::DriverFacts facts;
  facts.version = version;
  facts.cuda_version = Version::parse(cuda);
  facts.loaded = loaded;
  return facts;
}

probe::CompilerFacts compiler(const char* name, const char* path, const char* version) {
  return {name, std::string(name).find("clang") == 0 ? "clang" : "gcc", path,
          Version::parse(version)};
}

ClassifyContext context(std::optional<probe::DriverFacts> facts = std::nullopt) {
  ArchPlan archs{{*Version::parse("7.5")}, Version::parse("7.5"), "default"};
  return ClassifyContext{db(),
                         std::move(facts),
                         {},
                         {},
                         *Version::parse("13.0.88"),
                         "/usr/local/cuda-13.0",
                         archs,
                         std::nullopt,
                         std::nullopt,
                         std::nullopt,
                         std::nullopt};
}

ProcessResult process(int exit_code, std::string out, std::string err = {}) {
  ProcessResult result;
  result.exit_code = exit_code;
  result.out = std::move(out);
  result.err = std::move(err);
  return result;
}

Evidence ran(int exit_code, const std::string& out, const std::string& err = {}) {
  return Evidence{process(0, ""), process(exit_code, out, err), parse_program_output(out)};
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("no libcuda at all: the runtime's 'insufficient driver' (35) is named no_driver") {
  const auto cause = classify(ran(1, no_driver_run), context());
  REQUIRE(cause);
  CHECK(cause->id == CauseId::no_driver);
  CHECK(has(cause->message, "cudaErrorInsufficientDriver (35)"));
  CHECK(has(cause->fix, "nvidia-driver-580"));  // the oldest branch that runs CUDA 13.0
}

TEST_CASE("the same error with a driver present is driver_too_old, with the manifest's minimum") {
  const auto cause = classify(ran(1, no_driver_run), context(driver("535.104.05", "12.2")));
  REQUIRE(cause);
  CHECK(cause->id == CauseId::driver_too_old);
  CHECK(has(cause->message, "driver 535.104.05 (CUDA <= 12.2)"));
  // nvcc 13.0.88 ships with CUDA 13.0.1: minimum 580.82.07, minor-version floor 580.65.06.
  CHECK(has(cause->fix, ">= 580.82.07 for CUDA 13.0.1"));
  CHECK(has(cause->fix, "580.65.06"));
  CHECK(has(cause->fix, "cudaenv verify 12.2"));
}

TEST_CASE("an installed driver whose module is not loaded is no_driver with the modprobe fix") {
  const auto cause =
      classify(ran(1, no_driver_run), context(driver("535.104.05", "12.2", /*loaded=*/false)));
  REQUIRE(cause);
  CHECK(cause->id == CauseId::no_driver);
  CHECK(has(cause->fix, "sudo modprobe nvidia"));
}

TEST_CASE("no visible device with the driver loaded points at CUDA_VISIBLE_DEVICES") {
  auto ctx = context(driver("580.159.04", "13.0"));
  ctx.cuda_visible_devices = "";
  const auto cause = classify(ran(1, no_device_run), ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::no_driver);
  CHECK(has(cause->message, "no CUDA-capable device is detected"));
  CHECK(has(cause->fix, "CUDA_VISIBLE_DEVICES"));
}

TEST_CASE("no kernel image for the H200 names sm_90, the missing flag and the wrong build") {
  auto ctx = context(driver("580.159.04", "13.0"));
  ctx.archs = ArchPlan{{*Version::parse("8.0")}, std::nullopt, "only-arch"};
  const std::string out = std::string("versions driver=13000 runtime=13000\ndevices count=1\n") +
                          h200_gpu + no_kernel_image_error + "done status=failed\n";
  const auto cause = classify(ran(1, out), ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::no_kernel_image);
  CHECK(has(cause->message, "sm_90"));
  CHECK(has(cause->message, "GPU 0 (NVIDIA H200, sm_90)"));
  CHECK(has(cause->message, "machine code for sm_80 and no PTX"));
  CHECK(has(cause->fix, "-gencode arch=compute_90,code=sm_90"));
  CHECK(has(cause->fix, "--only-arch"));
}

TEST_CASE("nvcc refusing a new gcc names the limit and an installed older gcc for -ccbin") {
  auto ctx = context();
  ctx.compilers = {compiler("gcc", "/usr/bin/gcc", "16.1.0"),
                   compiler("gcc-12", "/usr/bin/gcc-12", "12.2.0"),
                   compiler("g++-12", "/usr/bin/g++-12", "12.2.0")};
  const Evidence evidence{process(1, "", gcc_too_new), std::nullopt, {}};
  const auto cause = classify(evidence, ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::host_compiler_unsupported);
  CHECK(has(cause->message, "gcc 16.1.0"));
  CHECK(has(cause->message, "gcc <= 15"));
  CHECK(has(cause->fix, "NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-12'"));
  CHECK(has(cause->fix, "-allow-unsupported-compiler"));
}

TEST_CASE("with no supported gcc installed the fix says which one to install") {
  auto ctx = context();
  ctx.compilers = {compiler("gcc", "/usr/bin/gcc", "16.1.0")};
  const Evidence evidence{process(1, "", gcc_too_new), std::nullopt, {}};
  const auto cause = classify(evidence, ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::host_compiler_unsupported);
  CHECK(has(cause->fix, "no gcc <= 15 is installed"));
  CHECK(has(cause->fix, "sudo apt install g++-15"));
}

TEST_CASE("nvcc that cannot target the GPU is no_kernel_image, naming toolkits that can") {
  auto ctx = context(driver("580.159.04", "13.0"));
  ctx.archs = ArchPlan{{*Version::parse("7.0")}, Version::parse("7.0"), "gpus"};
  const Evidence evidence{
      process(1, "", "nvcc fatal   : Unsupported gpu architecture 'compute_70'\n"),
      std::nullopt,
      {}};
  const auto cause = classify(evidence, ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::no_kernel_image);
  CHECK(has(cause->fix, "cannot build for sm_70 (Volta)"));
  CHECK(has(cause->fix, "CUDA 9.0 to 12.9"));
  CHECK(has(cause->fix, "cudaenv install 12.9"));
}

TEST_CASE("nvcc with no host compiler is compile_failed with the install fix") {
  const Evidence evidence{
      process(1, "",
              "gcc: No such file or directory\n"
              "nvcc fatal   : Failed to preprocess host compiler properties.\n"),
      std::nullopt,
      {}};
  const auto cause = classify(evidence, context());
  REQUIRE(cause);
  CHECK(cause->id == CauseId::compile_failed);
  CHECK(has(cause->message, "Failed to preprocess host compiler properties"));
  CHECK(has(cause->fix, "sudo apt install g++"));
}

TEST_CASE("a missing libcudart is cudart_mismatch quoting the loader") {
  const auto cause = classify(ran(127, "", loader_no_cudart), context());
  REQUIRE(cause);
  CHECK(cause->id == CauseId::cudart_mismatch);
  CHECK(has(cause->message, "libcudart.so.13: cannot open shared object file"));
  CHECK(has(cause->fix, "/usr/local/cuda-13.0/lib64"));
}

TEST_CASE("another toolkit's runtime loaded first is cudart_mismatch") {
  const auto cause = classify(ran(0, "versions driver=13000 runtime=13010\n"), context());
  REQUIRE(cause);
  CHECK(cause->id == CauseId::cudart_mismatch);
  CHECK(has(cause->message, "loaded the CUDA 13.1 runtime"));
}

TEST_CASE("cudaMalloc out of memory is out_of_memory") {
  const std::string out = std::string("versions driver=13000 runtime=13000\ndevices count=1\n") +
                          h200_gpu +
                          "error call=cudaMalloc code=2 error_name=cudaErrorMemoryAllocation "
                          "message=out of memory\n";
  const auto cause = classify(ran(1, out), context(driver("580.159.04", "13.0")));
  REQUIRE(cause);
  CHECK(cause->id == CauseId::out_of_memory);
  CHECK(has(cause->fix, "nvidia-smi"));
}

TEST_CASE("wrong elements are wrong_result, reported as a hardware or driver fault") {
  const std::string out = std::string("versions driver=13000 runtime=13000\ndevices count=1\n") +
                          h200_gpu +
                          "kernel gpu=0 status=mismatch elements=16777216 mismatches=3 "
                          "first_index=4096 expected=2793209711 got=0\ndone status=failed\n";
  const auto cause = classify(ran(1, out), context(driver("580.159.04", "13.0")));
  REQUIRE(cause);
  CHECK(cause->id == CauseId::wrong_result);
  CHECK(has(cause->message, "3 of 16777216"));
  CHECK(has(cause->message, "index 4096"));
  CHECK(has(cause->fix, "Xid"));
}

TEST_CASE("a run where every kernel matched and the build was cached has no cause") {
  const std::string out = std::string("versions driver=13000 runtime=13000\ndevices count=1\n") +
                          h200_gpu +
                          "kernel gpu=0 status=ok elements=16777216\n"
                          "bandwidth gpu=0 device_to_device_gbs=3105.2 bytes=67108864 repeats=50\n"
                          "done status=ok\n";
  Evidence evidence = ran(0, out);
  evidence.compile.reset();
  CHECK_FALSE(classify(evidence, context(driver("580.159.04", "13.0"))));
}

TEST_CASE("an unknown CUDA error falls back to runtime_error with its own words") {
  const auto out = std::string("versions driver=13000 runtime=13000\n") +
                   "error call=cudaSetDevice code=46 error_name=cudaErrorDevicesUnavailable "
                   "message=CUDA-capable device(s) is/are busy or unavailable\n";
  const auto cause = classify(ran(1, out), context(driver("580.159.04", "13.0")));
  REQUIRE(cause);
  CHECK(cause->id == CauseId::runtime_error);
  CHECK(has(cause->message, "cudaErrorDevicesUnavailable (46)"));
}

TEST_CASE("a framework's exception text names the same causes") {
  CHECK(cause_named_in("RuntimeError: CUDA error: no kernel image is available for execution on "
                       "the device") == CauseId::no_kernel_image);
  CHECK(cause_named_in("RuntimeError: Found no NVIDIA driver on your system. Please check that "
                       "you have an NVIDIA GPU and installed a driver") == CauseId::no_driver);
  CHECK(cause_named_in(gcc_too_new) == CauseId::host_compiler_unsupported);
  CHECK(cause_named_in(loader_no_cudart) == CauseId::cudart_mismatch);
  CHECK_FALSE(cause_named_in("everything is fine"));
}

TEST_CASE("cause identifiers are the documented ones") {
  CHECK(std::string(to_string(CauseId::no_driver)) == "no_driver");
  CHECK(std::string(to_string(CauseId::driver_too_old)) == "driver_too_old");
  CHECK(std::string(to_string(CauseId::no_kernel_image)) == "no_kernel_image");
  CHECK(std::string(to_string(CauseId::host_compiler_unsupported)) == "host_compiler_unsupported");
  CHECK(std::string(to_string(CauseId::cudart_mismatch)) == "cudart_mismatch");
  CHECK(std::string(to_string(CauseId::out_of_memory)) == "out_of_memory");
  CHECK(std::string(to_string(CauseId::wrong_result)) == "wrong_result");
  CHECK(std::string(to_string(CauseId::compile_failed)) == "compile_failed");
}

TEST_CASE("the database release for a toolkit known only by its nvcc version") {
  const auto* release = release_for(db(), *Version::parse("13.0.88"));
  REQUIRE(release);
  CHECK(release->version.str() == "13.0.1");
  const auto* exact = release_for(db(), *Version::parse("12.4.1"));
  REQUIRE(exact);
  CHECK(exact->version.str() == "12.4.1");
}

namespace {

// The runtime's own words for 803 and 804 (cudaGetErrorString of CUDA 13.0).
constexpr const char* mismatch_run =
    "versions driver=0 runtime=13000\n"
    "error call=cudaGetDeviceCount code=803 error_name=cudaErrorSystemDriverMismatch "
    "message=system has unsupported display driver / cuda driver combination\n";

constexpr const char* compat_hw_run =
    "versions driver=0 runtime=13000\n"
    "error call=cudaGetDeviceCount code=804 error_name=cudaErrorCompatNotSupportedOnDevice "
    "message=forward compatibility was attempted on non supported HW\n";

// NVIDIA's cuda-compat-13-0 as the H200 machine's image carries it: its note as readelf shows it.
forward::CompatLibrary compat_13_0() {
  forward::CompatLibrary library;
  library.directory = "/usr/local/cuda-13.0/compat";
  library.version = "580.95.05";
  library.note = *forward::parse_compat_note(
      R"({"format":1,"CUDA version":"13.0","driver":[535,550,565,570,575,580],"device":[1,2]})");
  return library;
}

}  // namespace

TEST_CASE("803 with a forward-compatibility library first and a newer module names the library") {
  auto ctx = context(driver("580.159.04", "13.0"));
  ctx.gpus = {probe::GpuFacts{0, "NVIDIA H200", *Version::parse("9.0"), 0}};
  ctx.forward_compat = compat_13_0();
  const auto cause = classify(ran(1, mismatch_run), ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::forward_compat_failed);
  CHECK(has(cause->message, "/usr/local/cuda-13.0/compat (libcuda 580.95.05)"));
  CHECK(has(cause->message, "580.159.04 is not older"));
  CHECK(has(cause->fix, "take /usr/local/cuda-13.0/compat off LD_LIBRARY_PATH"));
}

TEST_CASE("803 without one stays the driver's own library/module mismatch") {
  const auto cause = classify(ran(1, mismatch_run), context(driver("580.159.04", "13.0")));
  REQUIRE(cause);
  CHECK(cause->id == CauseId::no_driver);
  CHECK(has(cause->fix, "reboot"));
}

TEST_CASE("804 on a GeForce card says it is not a data-center GPU") {
  auto ctx = context(driver("535.104.05", "12.2"));
  ctx.gpus = {probe::GpuFacts{0, "NVIDIA GeForce RTX 4090", *Version::parse("8.9"), 0}};
  ctx.forward_compat = compat_13_0();
  const auto cause = classify(ran(1, compat_hw_run), ctx);
  REQUIRE(cause);
  CHECK(cause->id == CauseId::forward_compat_failed);
  CHECK(has(cause->message, "RTX 4090 is not a data-center GPU"));
  CHECK(std::string(to_string(cause->id)) == "forward_compat_failed");
  // A framework quoting the runtime's string is classified the same.
  CHECK(cause_named_in("RuntimeError: CUDA error: forward compatibility was attempted on non "
                       "supported HW") == CauseId::forward_compat_failed);
}
