// The parsers behind probe, fed the text real machines and tools print.

#include <doctest/doctest.h>

#include "probe/compilers.hpp"
#include "probe/driver.hpp"
#include "probe/kernel_modules.hpp"
#include "probe/os_release.hpp"
#include "probe/remembered_gpus.hpp"
#include "probe/toolkits.hpp"
#include "probe/wsl.hpp"

using namespace cudaenv;
using namespace cudaenv::probe;

TEST_CASE("/proc/driver/nvidia/version: proprietary and open kernel modules") {
  // Forms quoted in shared/data/compat-facts.md §3.2.
  CHECK(parse_proc_driver_version(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 19:21:56 UTC 2022\n"
            "GCC version:  gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)\n") == "515.76");
  CHECK(parse_proc_driver_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  "
            "Release Build  (dvs-builder@U16)  Tue May 20 2025\n") == "575.57.08");
  CHECK(parse_proc_driver_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  "
            "Release Build\n") == "580.65.06");
  CHECK_FALSE(parse_proc_driver_version("GCC version: gcc version 12\n").has_value());
  CHECK_FALSE(parse_proc_driver_version("").has_value());
}

TEST_CASE("driver versions from the driver libraries' file names") {
  CHECK(driver_version_from_library_name("libcuda.so.535.104.05") == "535.104.05");
  CHECK(driver_version_from_library_name("libnvidia-ml.so.580.95.05") == "580.95.05");
  CHECK_FALSE(driver_version_from_library_name("libcuda.so.1").has_value());
  CHECK_FALSE(driver_version_from_library_name("libcudart.so.12.4.127").has_value());
}

TEST_CASE("/proc/modules: only whole module names count") {
  KernelModuleFacts facts;
  parse_proc_modules(
      "nvidia_uvm 1540096 0 - Live 0x0000000000000000 (POE)\n"
      "nvidia_drm 77824 0 - Live 0x0000000000000000 (POE)\n"
      "nvidia 56717312 1 nvidia_uvm, Live 0x0000000000000000 (POE)\n"
      "nvidiafb 12345 0 - Live 0x0\n",
      facts);
  CHECK(facts.nvidia);
  CHECK(facts.nvidia_uvm);
  CHECK(facts.nvidia_drm);
  CHECK_FALSE(facts.nvidia_modeset);
  CHECK_FALSE(facts.nouveau);

  KernelModuleFacts nouveau;
  parse_proc_modules(
      "nouveau 2433024 3 - Live 0xffffffffc0a00000\nvideo 65536 1 nouveau, Live 0x0\n", nouveau);
  CHECK(nouveau.nouveau);
  CHECK_FALSE(nouveau.nvidia);
}

TEST_CASE("/etc/os-release with quotes and comments") {
  OsFacts facts;
  parse_os_release(
      "# comment\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\n"
      "VERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n",
      facts);
  CHECK(facts.id == "ubuntu");
  CHECK(facts.id_like == "debian");
  CHECK(facts.version_id == "24.04");
  CHECK(facts.codename == "noble");
  CHECK(facts.pretty_name == "Ubuntu 24.04.1 LTS");
}

TEST_CASE("nvcc --version output, as CUDA 13.0 and 11.8 print it") {
  CHECK(parse_nvcc_version_output("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                  "Copyright (c) 2005-2025 NVIDIA Corporation\n"
                                  "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
                                  "Cuda compilation tools, release 13.0, V13.0.88\n"
                                  "Build cuda_13.0.r13.0/compiler.36424714_0\n")
            ->str() == "13.0.88");
  CHECK(parse_nvcc_version_output("Cuda compilation tools, release 11.8, V11.8.89\n")->str() ==
        "11.8.89");
  CHECK_FALSE(parse_nvcc_version_output("bash: nvcc: command not found\n").has_value());
}

TEST_CASE("version.json names the release and nvcc's own version") {
  const auto version = parse_version_json(R"json({
    "cuda" : { "name" : "CUDA SDK", "version" : "12.4.1" },
    "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "12.4.127" },
    "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "12.4.131" }
  })json");
  CHECK(version.release->str() == "12.4.1");
  CHECK(version.nvcc->str() == "12.4.131");
  CHECK_FALSE(parse_version_json("{ not json").release.has_value());
  CHECK_FALSE(parse_version_json(R"({"cuda": "12.4"})").release.has_value());
}

TEST_CASE("version.txt of CUDA 11.0 and older") {
  CHECK(parse_version_txt("CUDA Version 11.0.228\n")->str() == "11.0.228");
  CHECK_FALSE(parse_version_txt("something else").has_value());
}

TEST_CASE("host compiler versions from gcc and clang") {
  CHECK(parse_compiler_version("12.2.0\n")->str() == "12.2.0");
  CHECK(
      parse_compiler_version("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\n")->str() ==
      "14.0.6");
  CHECK(parse_compiler_version("Ubuntu clang version 18.1.3 (1ubuntu1)\n")->str() == "18.1.3");
  CHECK_FALSE(parse_compiler_version("").has_value());
}

TEST_CASE("dpkg status: installed packages only, with their versions") {
  const auto packages = parse_dpkg_status(
      "Package: cuda-toolkit-13-0\nStatus: install ok installed\nVersion: 13.0.2-1\n\n"
      "Package: cuda-toolkit-12-4\nStatus: deinstall ok config-files\nVersion: 12.4.1-1\n\n"
      "Package: cuda-nvcc-13-0\nStatus: install ok installed\nArchitecture: amd64\nVersion: "
      "13.0.88-1\n");
  CHECK(packages.size() == 2);
  CHECK(packages.at("cuda-toolkit-13-0") == "13.0.2-1");
  CHECK(packages.at("cuda-nvcc-13-0") == "13.0.88-1");
  CHECK(packages.count("cuda-toolkit-12-4") == 0);
}

TEST_CASE(
    "the GPU-arch record the hook reads: used only for the boot and driver it was written on") {
  const auto text = render_remembered_gpus(
      "8d1f0c52", "580.95.05",
      {*Version::parse("9.0"), *Version::parse("8.0"), *Version::parse("9.0")});
  CHECK(text == "boot_id 8d1f0c52\ndriver 580.95.05\narch 8.0\narch 9.0\n");
  const auto archs = parse_remembered_gpus(text, "8d1f0c52", "580.95.05");
  REQUIRE(archs.size() == 2);
  CHECK(archs[0].str() == "8.0");
  CHECK(archs[1].str() == "9.0");
  CHECK(parse_remembered_gpus(text, "0b6e2d7a", "580.95.05").empty());  // another boot
  CHECK(parse_remembered_gpus(text, "8d1f0c52", "575.57.08").empty());  // another driver
  CHECK(parse_remembered_gpus("boot_id 8d1f0c52\ndriver 580.95.05\narch 9\n", "8d1f0c52",
                              "580.95.05")
            .empty());  // not a compute capability: none of it is trusted
  CHECK(parse_remembered_gpus("", "", "580.95.05").empty());
  // A machine without a boot id (some containers) still keys by the driver.
  CHECK(parse_remembered_gpus(render_remembered_gpus("", "580.95.05", {*Version::parse("9.0")}), "",
                              "580.95.05")
            .size() == 1);
}

TEST_CASE("WSL2 kernels by their release and /proc/version line") {
  // Releases reported in microsoft/WSL issues (11589: 5.15.146.1, 9962: 5.15.90.1) and the
  // current 6.6 series; the case differs between kernels built for WSL 2 over the years.
  CHECK(is_wsl2_kernel("6.6.87.2-microsoft-standard-WSL2"));
  CHECK(is_wsl2_kernel("5.15.146.1-microsoft-standard-WSL2"));
  CHECK(
      is_wsl2_kernel("Linux version 5.4.72-microsoft-standard-WSL2 (oe-user@oe-host) "
                     "(gcc version 8.2.0 (GCC)) #1 SMP Wed Oct 28 23:40:43 UTC 2020"));
  CHECK(is_wsl2_kernel("4.19.128-microsoft-standard-wsl2"));
  // WSL 1 has no GPU: its "kernel" is a syscall layer named after the Windows build.
  CHECK_FALSE(is_wsl2_kernel("4.4.0-19041-Microsoft"));
  CHECK_FALSE(is_wsl2_kernel("6.8.0-45-generic"));
  CHECK_FALSE(is_wsl2_kernel("6.5.0-1025-azure"));
  CHECK_FALSE(is_wsl2_kernel(""));
}
