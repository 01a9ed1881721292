// Whole machines described as files (tests/fixtures/machines/<name>, see its README.md), probed
// through the sysroot seam with the real library loader (dlopen of the fake driver) and the real
// process runner (the fixtures' compiler and nvcc scripts). Each test states everything
// `cudaenv info` must report for its machine; the facts are compared as exact text so that a
// probe that reads one thing wrong fails with the whole picture in view.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/environment.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "core/text.hpp"
#include "probe/library_loader.hpp"
#include "probe/machine.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::probe;
using cudaenv::test::FixtureMachine;
using cudaenv::test::TempDir;
using cudaenv::test::write_file;
namespace fs = std::filesystem;

namespace {

using Variables = std::map<std::string, std::string>;

// The PATH each distribution's login shell gives an ordinary user.
constexpr const char* debian_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Probes a fixture machine as its user would see it. HOME is an empty directory, so cudaenv's own
// store holds nothing unless `data_root` says otherwise.
MachineFacts probe_fixture(const std::string& name, Variables variables,
                           const std::optional<fs::path>& data_root = std::nullopt) {
  const FixtureMachine machine(name);
  const TempDir home;
  variables["HOME"] = home.path().string();
  const Environment env(std::move(variables));
  const Sysroot sysroot(machine.root());
  DlLibraryLoader loader(sysroot);
  SystemProcessRunner runner;
  return probe_machine({sysroot, loader, runner, env, data_root.value_or(paths::data_root(env))});
}

std::string version_text(const std::optional<Version>& version) {
  return version ? version->str() : "none";
}

// One line per fact, so a mismatch shows expected and actual lists side by side.
template <typename T, typename Describe>
std::string describe_each(const std::vector<T>& items, Describe describe) {
  std::vector<std::string> lines;
  for (const auto& item : items) lines.push_back(describe(item));
  return text::join(lines, "\n");
}

std::string describe_toolkit(const ToolkitFacts& toolkit) {
  std::vector<std::string> via;
  for (size_t i = 0; i < toolkit.origins.size(); ++i) {
    via.push_back(std::string(to_string(toolkit.origins[i])) + " " + toolkit.found_at[i]);
  }
  return version_text(toolkit.version) + " at " + toolkit.path + " from " + toolkit.version_source +
         " (nvcc " + version_text(toolkit.nvcc_version) + ")" +
         (toolkit.from_wheels ? " [wheels]" : "") + " via " + text::join(via, ", ");
}

std::string toolkits_of(const MachineFacts& facts) {
  return describe_each(facts.toolkits, describe_toolkit);
}

std::string compilers_of(const MachineFacts& facts) {
  return describe_each(facts.compilers, [](const CompilerFacts& compiler) {
    return compiler.name + " (" + compiler.family + ") " + compiler.path + " " +
           version_text(compiler.version);
  });
}

std::string gpus_of(const MachineFacts& facts) {
  return describe_each(facts.gpus, [](const GpuFacts& gpu) {
    return std::to_string(gpu.index) + ": " + gpu.name + " cc " + gpu.compute_capability.str() +
           " " + std::to_string(gpu.memory_bytes) + " bytes";
  });
}

std::string notes_of(const MachineFacts& facts) { return text::join(facts.notes, "\n"); }

std::string variables_of(const MachineFacts& facts) {
  return describe_each(facts.env.variables, [](const EnvVariableFacts& variable) {
    return variable.name + "=" + variable.value;
  });
}

std::string library_paths_of(const MachineFacts& facts) {
  return text::join(facts.env.cuda_library_paths, "\n");
}

std::string device_nodes_of(const MachineFacts& facts) {
  return text::join(facts.modules.device_nodes, " ");
}

// "nvidia nvidia_uvm ..." for the modules reported loaded.
std::string loaded_modules_of(const MachineFacts& facts) {
  const auto& modules = facts.modules;
  std::vector<std::string> loaded;
  if (modules.nvidia) loaded.emplace_back("nvidia");
  if (modules.nvidia_uvm) loaded.emplace_back("nvidia_uvm");
  if (modules.nvidia_modeset) loaded.emplace_back("nvidia_modeset");
  if (modules.nvidia_drm) loaded.emplace_back("nvidia_drm");
  if (modules.nouveau) loaded.emplace_back("nouveau");
  return text::join(loaded, " ");
}

constexpr const char* all_nvidia_modules = "nvidia nvidia_uvm nvidia_modeset nvidia_drm";

void check_os(const OsFacts& os, const OsFacts& expected) {
  CHECK(os.id == expected.id);
  CHECK(os.id_like == expected.id_like);
  CHECK(os.version_id == expected.version_id);
  CHECK(os.codename == expected.codename);
  CHECK(os.pretty_name == expected.pretty_name);
  CHECK(os.kernel == expected.kernel);
  CHECK(os.architecture == expected.architecture);
}

void check_default_link(const MachineFacts& facts, const std::string& chain,
                        const std::string& target, bool dangling) {
  REQUIRE(facts.default_link.has_value());
  CHECK(facts.default_link->path == "/usr/local/cuda");
  CHECK(text::join(facts.default_link->chain, " -> ") == chain);
  CHECK(facts.default_link->target == target);
  CHECK(facts.default_link->dangling == dangling);
}

}  // namespace

TEST_CASE("fixture ci-no-driver: a CI container with CUDA 13.0 assembled from pip wheels") {
  const auto facts = probe_fixture(
      "ci-no-driver", {{"PATH", std::string("/usr/local/cuda/bin:") + debian_path},
                       // Set by NVIDIA's CUDA images; neither directory exists here.
                       {"LD_LIBRARY_PATH", "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"}});

  CHECK_FALSE(facts.driver.has_value());
  CHECK(gpus_of(facts).empty());
  CHECK(notes_of(facts).empty());
  CHECK(facts.modules.modules_readable);
  CHECK(loaded_modules_of(facts).empty());
  CHECK(device_nodes_of(facts).empty());

  CHECK(toolkits_of(facts) ==
        "13.0.88 at /usr/local/cuda-13.0 from dist-info (nvcc 13.0.88) [wheels] via "
        "versioned-dir /usr/local/cuda-13.0, default-link /usr/local/cuda, PATH "
        "/usr/local/cuda-13.0");
  check_default_link(facts, "/usr/local/cuda -> /usr/local/cuda-13.0", "/usr/local/cuda-13.0",
                     false);

  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 12.2.0\n"
        "g++-12 (gcc) /usr/bin/g++-12 12.2.0\n"
        "gcc (gcc) /usr/bin/gcc 12.2.0\n"
        "gcc-12 (gcc) /usr/bin/gcc-12 12.2.0");
  check_os(facts.os, {"debian", "", "12", "bookworm", "Debian GNU/Linux 12 (bookworm)",
                      "6.8.0-1021-azure", "x86_64"});
  CHECK(variables_of(facts).empty());
  CHECK(library_paths_of(facts).empty());
}

TEST_CASE(
    "fixture nouveau-535-alternatives: driver installed, nouveau loaded, alternatives chain") {
  const auto facts = probe_fixture("nouveau-535-alternatives",
                                   {{"PATH", std::string("/usr/local/cuda/bin:") + debian_path +
                                                 ":/usr/games:/usr/local/games:/snap/bin"},
                                    {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"}});

  REQUIRE(facts.driver.has_value());
  const auto& driver = *facts.driver;
  CHECK(driver.version == "535.104.05");
  CHECK(std::string(to_string(driver.version_source)) == "library-file-name");
  CHECK(driver.library == "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  CHECK(version_text(driver.cuda_version) == "12.2");
  CHECK_FALSE(driver.loaded);
  CHECK_FALSE(driver.open_kernel_module);
  CHECK(gpus_of(facts).empty());
  CHECK(notes_of(facts) ==
        "nvmlInit_v2 failed with NVML error 9\n"
        "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"
        "NVIDIA driver 535.104.05 is installed but its kernel module is not loaded");

  CHECK(facts.modules.modules_readable);
  // i2c_nvidia_gpu (the USB-C controller) is loaded too: it is not the nvidia driver.
  CHECK(loaded_modules_of(facts) == "nouveau");
  CHECK(device_nodes_of(facts).empty());

  CHECK(toolkits_of(facts) ==
        "12.2.2 at /usr/local/cuda-12.2 from version.json (nvcc 12.2.140) via "
        "versioned-dir /usr/local/cuda-12, versioned-dir /usr/local/cuda-12.2\n"
        "11.8.0 at /usr/local/cuda-11.8 from version.json (nvcc 11.8.89) via "
        "versioned-dir /usr/local/cuda-11, versioned-dir /usr/local/cuda-11.8, "
        "default-link /usr/local/cuda, PATH /usr/local/cuda-11.8");
  check_default_link(facts, "/usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-11.8",
                     "/usr/local/cuda-11.8", false);

  // gcc and g++ are absolute links into /etc/alternatives, chosen to be version 12.
  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 12.3.0\n"
        "g++-11 (gcc) /usr/bin/g++-11 11.4.0\n"
        "g++-12 (gcc) /usr/bin/g++-12 12.3.0\n"
        "gcc (gcc) /usr/bin/gcc 12.3.0\n"
        "gcc-11 (gcc) /usr/bin/gcc-11 11.4.0\n"
        "gcc-12 (gcc) /usr/bin/gcc-12 12.3.0");
  check_os(facts.os, {"ubuntu", "debian", "22.04", "jammy", "Ubuntu 22.04.4 LTS",
                      "6.5.0-35-generic", "x86_64"});
  CHECK(variables_of(facts).empty());
  CHECK(library_paths_of(facts) == "/usr/local/cuda/lib64");
}

TEST_CASE("fixture dgx-h100-580: two H100s on driver 580, two toolkits, CUDA_HOME on the older") {
  const auto facts =
      probe_fixture("dgx-h100-580", {{"PATH", std::string("/usr/local/cuda/bin:") + debian_path},
                                     {"CUDA_HOME", "/usr/local/cuda-12.4"},
                                     {"LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64"}});

  REQUIRE(facts.driver.has_value());
  const auto& driver = *facts.driver;
  CHECK(driver.version == "580.95.05");
  CHECK(std::string(to_string(driver.version_source)) == "nvml");
  CHECK(driver.library == "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  CHECK(version_text(driver.cuda_version) == "13.0");
  CHECK(driver.loaded);
  // /proc/driver/nvidia/version names the open module, even though NVML gave the version.
  CHECK(driver.open_kernel_module);
  // cuInit would fail here (cuinit_error=999): the GPUs must come from NVML, with no cuInit note.
  CHECK(gpus_of(facts) ==
        "0: NVIDIA H100 80GB HBM3 cc 9.0 85520809984 bytes\n"
        "1: NVIDIA H100 80GB HBM3 cc 9.0 85520809984 bytes");
  CHECK(notes_of(facts).empty());

  CHECK(facts.modules.modules_readable);
  CHECK(loaded_modules_of(facts) == all_nvidia_modules);
  CHECK(device_nodes_of(facts) ==
        "/dev/nvidia-caps /dev/nvidia-modeset /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia0 "
        "/dev/nvidia1 /dev/nvidiactl");

  CHECK(toolkits_of(facts) ==
        "13.0.2 at /usr/local/cuda-13.0 from version.json (nvcc 13.0.88) via "
        "versioned-dir /usr/local/cuda-13.0, default-link /usr/local/cuda, PATH "
        "/usr/local/cuda-13.0\n"
        "12.4.1 at /usr/local/cuda-12.4 from version.json (nvcc 12.4.131) via "
        "versioned-dir /usr/local/cuda-12.4, CUDA_HOME /usr/local/cuda-12.4");
  check_default_link(facts, "/usr/local/cuda -> /usr/local/cuda-13.0", "/usr/local/cuda-13.0",
                     false);

  // clang, clang++, clang-18 and clang++-18 all lead to /usr/lib/llvm-18/bin/clang-18.
  CHECK(compilers_of(facts) ==
        "clang (clang) /usr/bin/clang 18.1.3\n"
        "clang++ (clang) /usr/bin/clang++ 18.1.3\n"
        "clang++-18 (clang) /usr/bin/clang++-18 18.1.3\n"
        "clang-18 (clang) /usr/bin/clang-18 18.1.3\n"
        "g++ (gcc) /usr/bin/g++ 13.2.0\n"
        "g++-13 (gcc) /usr/bin/g++-13 13.2.0\n"
        "gcc (gcc) /usr/bin/gcc 13.2.0\n"
        "gcc-13 (gcc) /usr/bin/gcc-13 13.2.0");
  check_os(facts.os, {"ubuntu", "debian", "24.04", "noble", "Ubuntu 24.04.1 LTS",
                      "6.8.0-45-generic", "x86_64"});
  CHECK(variables_of(facts) == "CUDA_HOME=/usr/local/cuda-12.4");
  CHECK(library_paths_of(facts) == "/usr/local/cuda-12.4/lib64");
}

// Modelled on the GPU machine recorded in docs/examples/info-h200.txt: NVIDIA's apt packages
// install the toolkit without a version.json, and the container toolkit mounts the driver's
// libraries in /usr/local/nvidia/lib64, which LD_LIBRARY_PATH names.
TEST_CASE("fixture h200-apt-toolkit: apt-installed CUDA 13.0 whose release comes from dpkg") {
  const auto facts = probe_fixture(
      "h200-apt-toolkit", {{"PATH", std::string("/usr/local/cuda/bin:") + debian_path},
                           {"CUDA_HOME", "/usr/local/cuda"},
                           {"LD_LIBRARY_PATH", "/usr/local/nvidia/lib64:/usr/local/nvidia/lib"}});

  REQUIRE(facts.driver.has_value());
  CHECK(facts.driver->version == "580.159.04");
  CHECK(std::string(to_string(facts.driver->version_source)) == "nvml");
  CHECK(facts.driver->library == "/usr/local/nvidia/lib64/libnvidia-ml.so.1");
  CHECK(version_text(facts.driver->cuda_version) == "13.0");
  CHECK(facts.driver->open_kernel_module);
  CHECK(gpus_of(facts) == "0: NVIDIA H200 cc 9.0 150109880320 bytes");
  CHECK(loaded_modules_of(facts) == "nvidia nvidia_uvm");

  // The release (13.0.2) from cuda-toolkit/compiler-13-0, nvcc's own version from cuda-nvcc-13-0;
  // the removed cuda-toolkit-12-4 (config files only) is not a toolkit.
  CHECK(toolkits_of(facts) ==
        "13.0.2 at /usr/local/cuda-13.0 from dpkg (nvcc 13.0.88) via "
        "versioned-dir /usr/local/cuda-13, versioned-dir /usr/local/cuda-13.0, "
        "default-link /usr/local/cuda, CUDA_HOME /usr/local/cuda, PATH /usr/local/cuda-13.0");
  check_default_link(facts, "/usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-13.0",
                     "/usr/local/cuda-13.0", false);
  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 13.3.0\n"
        "g++-13 (gcc) /usr/bin/g++-13 13.3.0\n"
        "gcc (gcc) /usr/bin/gcc 13.3.0\n"
        "gcc-13 (gcc) /usr/bin/gcc-13 13.3.0");
  // The driver's own libraries on LD_LIBRARY_PATH are not a stray toolkit.
  CHECK(library_paths_of(facts).empty());
}

TEST_CASE("fixture container-open-module-proc: no driver libraries, the open module in /proc") {
  const auto facts = probe_fixture("container-open-module-proc",
                                   {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/bin"}});

  REQUIRE(facts.driver.has_value());
  const auto& driver = *facts.driver;
  CHECK(driver.version == "575.57.08");
  CHECK(std::string(to_string(driver.version_source)) == "/proc/driver/nvidia/version");
  CHECK(driver.library.empty());
  CHECK_FALSE(driver.cuda_version.has_value());
  CHECK(driver.loaded);
  CHECK(driver.open_kernel_module);
  CHECK(gpus_of(facts).empty());
  CHECK(notes_of(facts).empty());

  CHECK(loaded_modules_of(facts) == all_nvidia_modules);
  CHECK(device_nodes_of(facts) == "/dev/nvidia-uvm /dev/nvidia0 /dev/nvidiactl");

  // No version.json: only running nvcc tells the version.
  CHECK(toolkits_of(facts) ==
        "12.9.86 at /opt/cuda from nvcc --version (nvcc 12.9.86) via opt-cuda /opt/cuda");
  CHECK_FALSE(facts.default_link.has_value());

  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 15.1.1\n"
        "g++-14 (gcc) /usr/bin/g++-14 14.2.1\n"
        "gcc (gcc) /usr/bin/gcc 15.1.1\n"
        "gcc-14 (gcc) /usr/bin/gcc-14 14.2.1");
  // Only /usr/lib/os-release exists in this image.
  check_os(facts.os, {"arch", "", "", "", "Arch Linux", "6.15.2-arch1-1", "x86_64"});
  CHECK(variables_of(facts).empty());
  CHECK(library_paths_of(facts).empty());
}

TEST_CASE(
    "fixture legacy-sysfs-kepler: driver 470 only in sysfs, runtime-only CUDA 11.0, dangling "
    "link") {
  const auto facts = probe_fixture(
      "legacy-sysfs-kepler", {{"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"},
                              {"LD_LIBRARY_PATH", "/usr/local/cuda-11.0/lib64"}});

  REQUIRE(facts.driver.has_value());
  const auto& driver = *facts.driver;
  CHECK(driver.version == "470.223.02");
  CHECK(std::string(to_string(driver.version_source)) == "/sys/module/nvidia/version");
  CHECK(driver.library.empty());
  CHECK_FALSE(driver.cuda_version.has_value());
  CHECK(driver.loaded);
  CHECK_FALSE(driver.open_kernel_module);
  CHECK(gpus_of(facts).empty());
  CHECK(notes_of(facts).empty());

  CHECK(loaded_modules_of(facts) == all_nvidia_modules);
  CHECK(device_nodes_of(facts).empty());

  CHECK(toolkits_of(facts) ==
        "11.0.228 at /usr/local/cuda-11.0 from version.txt (nvcc none) via versioned-dir "
        "/usr/local/cuda-11.0");
  check_default_link(facts, "/usr/local/cuda -> /usr/local/cuda-10.2", "/usr/local/cuda-10.2",
                     true);

  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 10.2.1\n"
        "g++-10 (gcc) /usr/bin/g++-10 10.2.1\n"
        "gcc (gcc) /usr/bin/gcc 10.2.1\n"
        "gcc-10 (gcc) /usr/bin/gcc-10 10.2.1");
  check_os(facts.os, {"debian", "", "11", "bullseye", "Debian GNU/Linux 11 (bullseye)",
                      "5.10.0-30-amd64", "x86_64"});
  CHECK(variables_of(facts).empty());
  CHECK(library_paths_of(facts) == "/usr/local/cuda-11.0/lib64");
}

TEST_CASE("fixture venv-wheels-on-path: nvcc from a virtualenv's wheel, CUDA_HOME left dangling") {
  const std::string wheel = "/home/dev/.venv/lib/python3.12/site-packages/nvidia/cuda_nvcc";
  const auto facts = probe_fixture("venv-wheels-on-path",
                                   {{"PATH", wheel + "/bin:/home/dev/.venv/bin:" + debian_path},
                                    {"VIRTUAL_ENV", "/home/dev/.venv"},
                                    {"CUDA_HOME", "/usr/local/cuda"}});

  CHECK_FALSE(facts.driver.has_value());
  CHECK(gpus_of(facts).empty());
  CHECK(notes_of(facts).empty());
  CHECK(facts.modules.modules_readable);
  CHECK(loaded_modules_of(facts).empty());
  CHECK(device_nodes_of(facts).empty());

  // CUDA_HOME names a directory that does not exist: reported as set, but it is no toolkit.
  CHECK(toolkits_of(facts) ==
        "12.6.85 at " + wheel + " from dist-info (nvcc 12.6.85) [wheels] via PATH " + wheel);
  CHECK_FALSE(facts.default_link.has_value());
  CHECK(variables_of(facts) == "CUDA_HOME=/usr/local/cuda");
  CHECK(library_paths_of(facts).empty());

  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 13.2.0\n"
        "g++-13 (gcc) /usr/bin/g++-13 13.2.0\n"
        "gcc (gcc) /usr/bin/gcc 13.2.0\n"
        "gcc-13 (gcc) /usr/bin/gcc-13 13.2.0");
  check_os(facts.os, {"ubuntu", "debian", "24.04", "noble", "Ubuntu 24.04.1 LTS",
                      "6.8.0-45-generic", "x86_64"});
}

TEST_CASE("fixture rocky-hpcsdk-wrapper: RTX 4090 on RHEL paths, nvcc a wrapper of the HPC SDK") {
  const std::string sdk = "/opt/nvidia/hpc_sdk/Linux_x86_64/25.5";
  const auto facts = probe_fixture(
      "rocky-hpcsdk-wrapper",
      {{"PATH", sdk + "/compilers/bin:/usr/local/bin:/usr/bin:/usr/local/sbin:/usr/sbin"},
       {"CUDA_VISIBLE_DEVICES", "0"}});

  REQUIRE(facts.driver.has_value());
  const auto& driver = *facts.driver;
  CHECK(driver.version == "575.57.08");
  CHECK(std::string(to_string(driver.version_source)) == "nvml");
  CHECK(driver.library == "/usr/lib64/libnvidia-ml.so.1");
  CHECK(version_text(driver.cuda_version) == "12.9");
  CHECK(driver.loaded);
  CHECK_FALSE(driver.open_kernel_module);  // the proprietary module, per /proc
  // This machine's NVML lists no GPUs (nvml_devices=0): they come through cuInit and the driver
  // API.
  CHECK(gpus_of(facts) == "0: NVIDIA GeForce RTX 4090 cc 8.9 25757220864 bytes");
  CHECK(notes_of(facts).empty());

  CHECK(loaded_modules_of(facts) == all_nvidia_modules);
  CHECK(device_nodes_of(facts) ==
        "/dev/nvidia-modeset /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia0 /dev/nvidiactl");

  // compilers/bin/nvcc has no nvcc.profile beside it: nvcc's dry run names the real prefix.
  CHECK(toolkits_of(facts) == "12.9.0 at " + sdk +
                                  "/cuda/12.9 from version.json (nvcc 12.9.41) via PATH " + sdk +
                                  "/cuda/12.9");
  CHECK_FALSE(facts.default_link.has_value());

  CHECK(compilers_of(facts) ==
        "g++ (gcc) /usr/bin/g++ 11.5.0\n"
        "gcc (gcc) /usr/bin/gcc 11.5.0");
  check_os(facts.os, {"rocky", "rhel centos fedora", "9.5", "", "Rocky Linux 9.5 (Blue Onyx)",
                      "5.14.0-503.14.1.el9_5.x86_64", "x86_64"});
  CHECK(variables_of(facts) == "CUDA_VISIBLE_DEVICES=0");
  CHECK(library_paths_of(facts).empty());
}

TEST_CASE(
    "fixture wsl2-linux-driver-2204: the Windows driver in /usr/lib/wsl/lib, not the Linux one") {
  const auto facts = probe_fixture("wsl2-linux-driver-2204", {{"PATH", debian_path}});

  CHECK(facts.wsl.wsl2);
  CHECK(facts.wsl.evidence == "/proc/sys/kernel/osrelease: 5.15.167.4-microsoft-standard-WSL2");
  CHECK(facts.wsl.driver_store);
  CHECK(facts.wsl.dxg_device);
  // The dynamic linker would find nvidia-driver-535's libcuda first; only its path is reported.
  CHECK(text::join(facts.wsl.linux_driver_libraries, " ") ==
        "/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01");
  REQUIRE(facts.driver.has_value());
  CHECK(facts.driver->version == "566.36");
  CHECK(facts.driver->library == "/usr/lib/wsl/lib/libnvidia-ml.so.1");
  CHECK(version_text(facts.driver->cuda_version) == "12.7");
  CHECK(gpus_of(facts) == "0: NVIDIA GeForce RTX 3060 Laptop GPU cc 8.6 6442450944 bytes");
  CHECK(notes_of(facts).empty());
  CHECK(loaded_modules_of(facts).empty());
}

TEST_CASE("an ordinary machine is not WSL2") {
  const auto facts = probe_fixture("dgx-h100-580", {{"PATH", debian_path}});
  CHECK_FALSE(facts.wsl.wsl2);
  CHECK(facts.wsl.evidence.empty());
  CHECK(facts.wsl.linux_driver_libraries.empty());
}

TEST_CASE("cudaenv's own store is read from the host, whatever the sysroot") {
  const TempDir data;
  const auto store = data.path() / "toolkits";
  write_file(
      store / "12.8.1/version.json",
      R"({"cuda":{"name":"CUDA SDK","version":"12.8.1"},"cuda_nvcc":{"name":"CUDA NVCC","version":"12.8.93"}})");
  // An install in progress and the store's lock are not toolkits.
  write_file(
      store / ".staging-12.9.1/version.json",
      R"({"cuda":{"name":"CUDA SDK","version":"12.9.1"},"cuda_nvcc":{"name":"CUDA NVCC","version":"12.9.86"}})");
  write_file(store / ".lock", "");

  const auto facts = probe_fixture(
      "ci-no-driver", {{"PATH", std::string("/usr/local/cuda/bin:") + debian_path}}, data.path());

  const auto installed = fs::canonical(store / "12.8.1").string();
  CHECK(toolkits_of(facts) ==
        "13.0.88 at /usr/local/cuda-13.0 from dist-info (nvcc 13.0.88) [wheels] via "
        "versioned-dir /usr/local/cuda-13.0, default-link /usr/local/cuda, PATH "
        "/usr/local/cuda-13.0\n"
        "12.8.1 at " +
            installed + " from version.json (nvcc 12.8.93) via cudaenv " +
            (store / "12.8.1").string());
}
