// verify's parts other than the classifier: reading the program's output, what the program is
// built for and where it is cached, which toolkit is selected, the frameworks' coverage, cuDNN.

#include <algorithm>

#include <doctest/doctest.h>

#include "core/paths.hpp"
#include "here/here.hpp"
#include "manifest/load.hpp"
#include "test_util.hpp"
#include "verify/build.hpp"
#include "verify/cudnn.hpp"
#include "verify/embedded.hpp"
#include "verify/frameworks.hpp"
#include "verify/program_output.hpp"
#include "verify/selection.hpp"

using namespace cudaenv;
using namespace cudaenv::verify;

namespace {

const manifest::Database& db() { return test::embedded_database(); }

Version v(const char* text) { return *Version::parse(text); }

Environment one_variable(const char* name, const char* value) {
  return Environment(std::map<std::string, std::string>{{name, value}});
}

probe::ToolkitFacts toolkit(const char* path, const char* version,
                            std::vector<probe::ToolkitOrigin> origins) {
  probe::ToolkitFacts facts;
  facts.path = path;
  facts.version = Version::parse(version);
  facts.origins = std::move(origins);
  facts.found_at.assign(facts.origins.size(), path);
  return facts;
}

}  // namespace

TEST_CASE("the program's report is read line by line, free text last") {
  const auto report = parse_program_output(
      "versions driver=13000 runtime=13000\n"
      "devices count=1\n"
      "gpu index=0 cc=9.0 sms=132 memory=150109880320 name=NVIDIA H200 NVL\n"
      "kernel gpu=0 status=ok elements=16777216\n"
      "bandwidth gpu=0 device_to_device_gbs=3105.2 bytes=67108864 repeats=50\n"
      "done status=ok\n");
  CHECK(report.driver_version == 13000);
  CHECK(report.runtime_version == 13000);
  CHECK(report.device_count == 1);
  REQUIRE(report.gpus.size() == 1);
  const auto& gpu = report.gpus[0];
  CHECK(gpu.name == "NVIDIA H200 NVL");
  CHECK(gpu.compute_capability == v("9.0"));
  CHECK(gpu.multiprocessors == 132);
  CHECK(gpu.memory_bytes == 150109880320ull);
  REQUIRE(gpu.kernel);
  CHECK(gpu.kernel->ok);
  CHECK(gpu.kernel->elements == 16777216);
  REQUIRE(gpu.bandwidth_gbs);
  CHECK(*gpu.bandwidth_gbs == doctest::Approx(3105.2));
  CHECK(report.finished_ok);
  CHECK(report.errors.empty());
}

TEST_CASE("an error line keeps CUDA's message whole and the device it happened on") {
  const auto report = parse_program_output(
      "gpu index=1 cc=8.0 sms=108 memory=85899345920 name=NVIDIA A100-SXM4-80GB\n"
      "error call=cudaMalloc code=2 error_name=cudaErrorMemoryAllocation message=out of memory\n");
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0].call == "cudaMalloc");
  CHECK(report.errors[0].code == 2);
  CHECK(report.errors[0].name == "cudaErrorMemoryAllocation");
  CHECK(report.errors[0].message == "out of memory");
  CHECK(report.errors[0].gpu == 1);
  CHECK_FALSE(report.finished_ok);
}

TEST_CASE("the program and the framework script are compiled in") {
  CHECK(embedded_file("device_query.cu").find("cudaGetErrorName") != std::string::npos);
  CHECK(embedded_file("frameworks.py").find("get_arch_list") != std::string::npos);
  CHECK(embedded_file("nothing").empty());
}

TEST_CASE("the program is built for the GPUs present, with PTX for the highest") {
  const auto plan = plan_architectures(db(), v("13.0.2"), {v("9.0"), v("8.0"), v("9.0")}, {});
  CHECK(plan.sass == std::vector<Version>{v("8.0"), v("9.0")});
  CHECK(plan.ptx == v("9.0"));
  CHECK(plan.source == "gpus");
  CHECK(gencode_arguments(plan) ==
        std::vector<std::string>{"-gencode", "arch=compute_80,code=sm_80", "-gencode",
                                 "arch=compute_90,code=sm_90", "-gencode",
                                 "arch=compute_90,code=compute_90"});
  CHECK(describe(plan) == "sm_80 sm_90 + PTX compute_90");
}

TEST_CASE("a GPU the toolkit has no target for is built for its family's older member") {
  // CUDA 12.8 knows sm_100, not sm_103 (first in 12.9): a B300's program is sm_100 code, which
  // runs on 10.3 by NVIDIA's binary compatibility rule, and the build line says so.
  const auto plan = plan_architectures(db(), v("12.8.93"), {v("10.3")}, {});
  CHECK(plan.sass == std::vector<Version>{v("10.0")});
  CHECK(plan.ptx == v("10.0"));
  REQUIRE(plan.through_family.size() == 1);
  CHECK(plan.through_family.front().first == v("10.3"));
  CHECK(describe(plan).find("sm_100 for the sm_103 GPU") != std::string::npos);
  // 12.9 targets sm_103 itself.
  const auto native = plan_architectures(db(), v("12.9.86"), {v("10.3")}, {});
  CHECK(native.sass == std::vector<Version>{v("10.3")});
  CHECK(native.through_family.empty());
}

TEST_CASE("with no GPU the program is built for the oldest architecture the toolkit targets") {
  // CUDA 13.0 dropped Maxwell, Pascal and Volta: Turing (7.5) is its oldest; 12.4 still has 5.0.
  CHECK(plan_architectures(db(), v("13.0.88"), {}, {}).sass == std::vector<Version>{v("7.5")});
  CHECK(plan_architectures(db(), v("12.4.1"), {}, {}).sass == std::vector<Version>{v("5.0")});
  CHECK(plan_architectures(db(), v("13.0.88"), {}, {}).source == "default");
}

TEST_CASE("--only-arch and --no-ptx make the deliberately wrong build") {
  const auto plan = plan_architectures(db(), v("13.0.2"), {v("9.0")}, {{v("8.0")}, true});
  CHECK(plan.sass == std::vector<Version>{v("8.0")});
  CHECK_FALSE(plan.ptx);
  CHECK(describe(plan) == "sm_80, no PTX");
  CHECK(gencode_arguments(plan) ==
        std::vector<std::string>{"-gencode", "arch=compute_80,code=sm_80"});
}

TEST_CASE("the cache key changes with what changes the build, and only with that") {
  BuildSpec spec{"/usr/local/cuda-13.0",
                 "13.0.88",
                 plan_architectures(db(), v("13.0.88"), {v("9.0")}, {}),
                 "program text",
                 {{"PATH", "/usr/bin"}}};
  const auto key = cache_key(spec);
  CHECK(key.rfind("13.0.88-sm_90+compute_90-", 0) == 0);
  auto other = spec;
  other.environment["PATH"] = "/bin";  // not read by nvcc's build
  CHECK(cache_key(other) == key);
  other.environment["NVCC_CCBIN"] = "g++-12";
  CHECK(cache_key(other) != key);
  other = spec;
  other.program += " ";
  CHECK(cache_key(other) != key);
  other = spec;
  other.toolkit_path = "/opt/cuda";
  CHECK(cache_key(other) != key);
  other = spec;
  other.archs.ptx.reset();
  CHECK(cache_key(other) != key);
}

TEST_CASE("a second build of the same program is answered by the cache") {
  test::TempDir cache;
  struct Nvcc final : ProcessRunner {
    int runs = 0;
    Result<ProcessResult> run(const Command& command) override {
      ++runs;
      const auto flag = std::find(command.argv.begin(), command.argv.end(), std::string("-o"));
      const auto& output = *(flag + 1);
      test::write_file(output, "#!/bin/sh\n");
      std::filesystem::permissions(output, std::filesystem::perms::owner_all);
      return ProcessResult{0, false, "", ""};
    }
  } nvcc;
  const BuildSpec spec{
      "/opt/cuda", "13.0.2", plan_architectures(db(), v("13.0.2"), {}, {}), "int main() {}", {}};
  auto first = build_program(spec, cache.path(), nvcc);
  REQUIRE(first.ok());
  CHECK_FALSE(first->cached);
  CHECK(first->compile);
  CHECK(std::filesystem::exists(first->binary));
  CHECK(first->command.front() == "/opt/cuda/bin/nvcc");
  auto second = build_program(spec, cache.path(), nvcc);
  REQUIRE(second.ok());
  CHECK(second->cached);
  CHECK(second->binary == first->binary);
  CHECK(nvcc.runs == 1);
}

TEST_CASE("a toolkit named by SPEC comes from cudaenv's store first, then from the machine") {
  const Sysroot root;
  const std::vector<probe::ToolkitFacts> toolkits{
      toolkit("/usr/local/cuda-13.0", "13.0.2",
              {probe::ToolkitOrigin::versioned_dir, probe::ToolkitOrigin::path_nvcc}),
      toolkit("/data/toolkits/12.4.1", "12.4.1", {probe::ToolkitOrigin::cudaenv}),
      toolkit("/usr/local/cuda-12.4", "12.4.0", {probe::ToolkitOrigin::versioned_dir})};
  auto store = select_toolkit({VersionSpec::parse("12.4").value(), std::nullopt}, toolkits, root);
  REQUIRE(store.ok());
  CHECK(store->facts.path == "/data/toolkits/12.4.1");
  CHECK(store->selected_by == "spec");
  auto machine = select_toolkit({VersionSpec::parse("13").value(), std::nullopt}, toolkits, root);
  REQUIRE(machine.ok());
  CHECK(machine->facts.path == "/usr/local/cuda-13.0");
  auto missing = select_toolkit({VersionSpec::parse("11.8").value(), std::nullopt}, toolkits, root);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().hint == "install it with 'cudaenv install 11.8'");
}

TEST_CASE("without SPEC the active version applies, then the nvcc on PATH, CUDA_HOME, the link") {
  const Sysroot root;
  std::vector<probe::ToolkitFacts> toolkits{
      toolkit("/usr/local/cuda-13.0", "13.0.2", {probe::ToolkitOrigin::default_link}),
      toolkit("/opt/cuda-12.4", "12.4.1", {probe::ToolkitOrigin::cuda_home}),
      toolkit("/home/u/venv", "12.8.93", {probe::ToolkitOrigin::path_nvcc})};
  CHECK(select_toolkit({}, toolkits, root)->selected_by == "PATH");
  toolkits.pop_back();
  CHECK(select_toolkit({}, toolkits, root)->selected_by == "CUDA_HOME");
  toolkits.pop_back();
  CHECK(select_toolkit({}, toolkits, root)->selected_by == "default-link");
  toolkits.pop_back();
  CHECK(select_toolkit({}, toolkits, root).error().kind == ErrorKind::not_found);

  // What applies here decides (here/here.hpp): its serving toolkit, matched among probe's.
  here::Here here;
  here.selection.cuda = *VersionSpec::parse("12.4");
  here.selection.source = project::SelectionSource::environment;
  here::ServingToolkit serving;
  serving.installed.path = "/opt/cuda-12.4";
  serving.installed.version = *Version::parse("12.4.1");
  serving.place = here::ToolkitPlace::system_prefix;
  serving.machine_path = "/opt/cuda-12.4";
  here.toolkit = serving;
  toolkits = {toolkit("/usr/local/cuda-13.0", "13.0.2", {probe::ToolkitOrigin::path_nvcc}),
              toolkit("/opt/cuda-12.4", "12.4.1", {probe::ToolkitOrigin::versioned_dir})};
  SelectionRequest request;
  request.here = here;
  auto chosen = select_toolkit(request, toolkits, root);
  REQUIRE(chosen.ok());
  CHECK(chosen->facts.path == "/opt/cuda-12.4");
  CHECK(chosen->reason == "CUDAENV_VERSION=12.4");
  // A selection nothing serves is an error, never the nvcc on PATH proved in its place.
  request.here->toolkit.reset();
  request.here->missing = make_error(ErrorKind::not_found, "CUDA 12.4 is not installed");
  CHECK(select_toolkit(request, toolkits, root).error().kind == ErrorKind::not_found);
  const auto bad = one_variable("CUDAENV_VERSION", "twelve");
  CHECK(here::find_here(bad, paths::working_directory(bad)).error().kind == ErrorKind::usage);
}

TEST_CASE("a toolkit found below a sysroot is run from the host path that holds it") {
  const Sysroot root("/srv/machine");
  const std::vector<probe::ToolkitFacts> toolkits{
      toolkit("/usr/local/cuda-13.0", "13.0.2", {probe::ToolkitOrigin::path_nvcc})};
  CHECK(select_toolkit({}, toolkits, root)->host_path == "/srv/machine/usr/local/cuda-13.0");
}

TEST_CASE("a framework's architecture list covers a GPU natively, through PTX, or not at all") {
  const std::vector<std::string> cu128{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"};
  CHECK(coverage_for(cu128, v("8.9")) == Coverage::native);  // sm_86 runs on 8.9
  CHECK(coverage_for(cu128, v("6.1")) == Coverage::none);    // the GTX 1080 trap
  CHECK(coverage_for({"sm_80", "compute_80"}, v("9.0")) == Coverage::ptx_jit);
  CHECK(coverage_for({"sm_90a"}, v("9.0")) == Coverage::native);
  CHECK(coverage_for({"sm_90a"}, v("10.0")) == Coverage::none);
  CHECK(coverage_for({"jit"}, v("9.0")) == Coverage::jit);
  CHECK(coverage_for({}, v("9.0")) == Coverage::unknown);
}

TEST_CASE("the framework script's output is read into a report") {
  auto report = parse_framework_output(
      "torch",
      "framework framework=torch status=imported version=2.8.0+cu128 cuda=12.8 gpus=1 "
      "archs=sm_75,sm_80,sm_90\n"
      "op framework=torch status=failed message=AcceleratorError: CUDA error: no kernel image is "
      "available for execution on the device\n");
  CHECK(report.installed);
  CHECK(report.version == "2.8.0+cu128");
  CHECK(report.cuda == "12.8");
  CHECK(report.gpus == 1);
  CHECK(report.archs == std::vector<std::string>{"sm_75", "sm_80", "sm_90"});
  CHECK(report.op_ok == false);
  CHECK(report.message.find("no kernel image") != std::string::npos);

  auto missing = parse_framework_output(
      "jax", "framework framework=jax status=missing message=No module named 'jax'\n");
  CHECK_FALSE(missing.installed);
  CHECK(missing.message == "No module named 'jax'");

  auto cpu = parse_framework_output(
      "torch",
      "framework framework=torch status=imported version=2.8.0+cpu cuda=- gpus=0 archs=-\n");
  CHECK(cpu.installed);
  CHECK_FALSE(cpu.cuda);
  CHECK_FALSE(cpu.cudnn);
  CHECK(cpu.archs.empty());

  // What sync compares with the lock: the Python it ran in, the cuDNN the framework loads.
  auto synced = parse_framework_output(
      "torch",
      "python version=3.12\n"
      "framework framework=torch status=imported version=2.5.1+cu124 cuda=12.4 cudnn=9.1.0 "
      "gpus=0 archs=-\n");
  CHECK(synced.python == "3.12");
  CHECK(synced.cudnn == "9.1.0");
  CHECK(synced.cuda == "12.4");
}

TEST_CASE("cuDNN's version is read from cudnn_version.h as cudnnGetVersion() encodes it") {
  CHECK(parse_cudnn_version_header("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n"
                                   "#define CUDNN_PATCHLEVEL 0\n") == 91900);
  CHECK(parse_cudnn_version_header("#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n"
                                   "#define CUDNN_PATCHLEVEL 7\n") == 8907);
  CHECK_FALSE(parse_cudnn_version_header("#define CUDA_VERSION 12040\n"));
}

TEST_CASE("--cudnn finds the library in lib64/ or lib/ and the header beside it") {
  test::TempDir prefix;
  test::write_file(prefix.path() / "lib/libcudnn.so.9", "");
  test::write_file(prefix.path() / "lib/libcudnn.so", "");
  test::write_file(prefix.path() / "include/cudnn_version.h",
                   "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n");
  auto found = locate_cudnn(prefix.path());
  REQUIRE(found.ok());
  CHECK(found->library == (prefix.path() / "lib/libcudnn.so.9").string());
  CHECK(found->directory == (prefix.path() / "lib").string());
  CHECK(found->expected == 90100);
  auto none = locate_cudnn(prefix.path() / "include");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().kind == ErrorKind::not_found);
}

TEST_CASE("a toolkit without an nvcc is a failed compile for the classifier, not an error") {
  test::TempDir cache;
  SystemProcessRunner runner;
  const BuildSpec spec{(cache.path() / "no-toolkit").string(),
                       "12.9.1",
                       plan_architectures(db(), v("12.9.1"), {}, {}),
                       "int main() {}",
                       {}};
  auto result = build_program(spec, cache.path(), runner);
  REQUIRE(result.ok());
  CHECK_FALSE(result->ok());
  REQUIRE(result->compile);
  CHECK(result->compile->exit_code == 127);
  CHECK(result->compile->err.find("bin/nvcc") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(result->binary));
}

namespace {

// Answers every command with one output, as frameworks.py would print it.
struct CannedPython final : ProcessRunner {
  std::string output;
  std::vector<std::string> argv;
  Result<ProcessResult> run(const Command& command) override {
    argv = command.argv;
    return ProcessResult{0, false, output, ""};
  }
};

FrameworkReport check_with(const std::string& name, const std::string& output,
                           const std::vector<Version>& gpus) {
  test::TempDir bin;
  test::write_file(bin.path() / "python3", "");
  std::filesystem::permissions(bin.path() / "python3", std::filesystem::perms::owner_all);
  CannedPython python;
  python.output = output;
  const ClassifyContext context{db(),         std::nullopt, {},          {},
                                v("12.8.1"),  "/opt/cuda",  ArchPlan{},  std::nullopt,
                                std::nullopt, std::nullopt, std::nullopt};
  auto report =
      check_framework(name, "script", {{"PATH", bin.path().string()}}, python, gpus, context);
  CHECK(python.argv ==
        std::vector<std::string>{(bin.path() / "python3").string(), "-c", "script", name});
  return report;
}

}  // namespace

TEST_CASE("a framework built without the GPU's architecture is no_kernel_image") {
  const auto report =
      check_with("torch",
                 "framework framework=torch status=imported version=2.8.0+cu128 cuda=12.8 gpus=1 "
                 "archs=sm_75,sm_80,sm_86,sm_90,sm_100,sm_120\n"
                 "op framework=torch status=ok value=1649266917376 expected=1649266917376\n",
                 {v("6.1")});
  REQUIRE(report.cause);
  CHECK(report.cause->id == CauseId::no_kernel_image);
  CHECK(report.cause->message.find("no kernels for sm_61") != std::string::npos);
  CHECK(report.cause->fix.find("cudaenv resolve --torch") != std::string::npos);
}

TEST_CASE("a framework that covers the GPU and computes the right sum passes") {
  const auto report =
      check_with("torch",
                 "framework framework=torch status=imported version=2.8.0+cu128 cuda=12.8 gpus=1 "
                 "archs=sm_75,sm_80,sm_86,sm_90,sm_100,sm_120\n"
                 "op framework=torch status=ok value=1649266917376 expected=1649266917376\n",
                 {v("9.0")});
  CHECK_FALSE(report.cause);
  REQUIRE(report.coverage.size() == 1);
  CHECK(report.coverage[0].second == Coverage::native);
}

TEST_CASE("a missing or CPU-only framework fails that framework's check") {
  const auto missing =
      check_with("tensorflow",
                 "framework framework=tensorflow status=missing message=No module named "
                 "'tensorflow'\n",
                 {v("9.0")});
  REQUIRE(missing.cause);
  CHECK(missing.cause->id == CauseId::framework_not_installed);
  const auto cpu = check_with(
      "torch",
      "framework framework=torch status=imported version=2.8.0+cpu cuda=- gpus=0 archs=-\n",
      {v("9.0")});
  REQUIRE(cpu.cause);
  CHECK(cpu.cause->id == CauseId::framework_cpu_only);
}
