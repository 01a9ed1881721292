// `cudaenv doctor` on fixture machines (tests/fixtures/machines/doctor-*): each machine is broken
// in known ways, and each check must report exactly that, with the evidence and fix that say so.

#include <algorithm>
#include <map>
#include <string>

#include <doctest/doctest.h>

#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "doctor/doctor.hpp"
#include "manifest/load.hpp"
#include "probe/library_loader.hpp"
#include "probe/python_frameworks.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using cudaenv::test::FixtureMachine;
using cudaenv::test::TempDir;

namespace {

constexpr const char* debian_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const manifest::Database& database() {
  static const auto db = manifest::load_database(manifest::embedded_manifests());
  REQUIRE(db.ok());
  return *db;
}

// Runs the doctor on a copy of the machine, as its user with these variables would.
doctor::Report doctor_on(const std::string& name, std::map<std::string, std::string> variables) {
  const FixtureMachine machine(name);
  const TempDir home;
  variables["HOME"] = home.path().string();
  if (variables.count("PATH") == 0)
    variables["PATH"] = std::string("/usr/local/cuda/bin:") + debian_path;
  const Environment env(std::move(variables));
  const Sysroot sysroot(machine.root());
  probe::DlLibraryLoader loader(sysroot);
  SystemProcessRunner runner;
  const auto facts = doctor::gather_facts({sysroot, loader, runner, env, paths::data_root(env)});
  REQUIRE(facts);
  return doctor::run_doctor(*facts, database());
}

const doctor::Finding& finding(const doctor::Report& report, const std::string& id) {
  for (const auto& f : report.findings) {
    if (f.id == id) return f;
  }
  FAIL("no finding " << id);
  throw std::logic_error("unreachable");
}

// "id=status" for every check, in order: one glance shows the whole verdict.
std::string verdict(const doctor::Report& report) {
  std::vector<std::string> parts;
  for (const auto& f : report.findings) parts.push_back(f.id + "=" + doctor::to_string(f.status));
  return text::join(parts, " ");
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return text::contains(line, needle); });
}

}  // namespace

TEST_CASE("doctor: a healthy Ubuntu 24.04 machine passes every check") {
  const auto report = doctor_on("doctor-healthy-2404", {});
  CHECK(verdict(report) ==
        "kernel-module=ok nouveau=ok secure-boot=ok dkms=ok driver-packages=ok device-nodes=ok "
        "nvidia-smi=ok driver-toolkit=ok forward-compat=skip gpu-arch=ok cuda-link=ok "
        "library-path=ok "
        "host-compiler=ok glibc-headers=ok framework=ok framework-binaries=skip cudnn-copies=skip "
        "triton-ptxas=skip stores=skip shell-hook=ok");
  CHECK_FALSE(report.has_failure());
  CHECK(report.active.selected_by == "nvcc on PATH");
  CHECK(report.active.toolkit->path == "/usr/local/cuda-13.0");
  CHECK(any_contains(finding(report, "secure-boot").evidence, "SecureBoot-8be4df61"));
  CHECK(any_contains(finding(report, "nouveau").evidence,
                     "/etc/modprobe.d/nvidia-blacklists-nouveau.conf: blacklist nouveau"));
  CHECK(finding(report, "framework").summary ==
        "torch 2.8.0+cu128 (CUDA 12.8) fits the driver and the GPUs");
}

TEST_CASE("doctor: nouveau holds the GPU, so the installed driver 535 cannot load") {
  const auto report = doctor_on("doctor-nouveau-2204", {});
  CHECK(verdict(report) ==
        "kernel-module=fail nouveau=fail secure-boot=ok dkms=ok driver-packages=ok "
        "device-nodes=fail nvidia-smi=fail driver-toolkit=ok forward-compat=skip gpu-arch=skip "
        "cuda-link=ok "
        "library-path=ok host-compiler=fail glibc-headers=skip framework=skip "
        "framework-binaries=skip "
        "cudnn-copies=skip triton-ptxas=skip stores=skip shell-hook=ok");
  const auto& module = finding(report, "kernel-module");
  CHECK(text::contains(module.summary, "nouveau is loaded and holds the GPU"));
  CHECK(any_contains(module.evidence, "dmesg: [   61.204911] NVRM: The NVIDIA probe routine"));
  const auto& nouveau = finding(report, "nouveau");
  CHECK(nouveau.fix == std::vector<std::string>{
                           "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
                           "/etc/modprobe.d/blacklist-nouveau.conf",
                           "sudo update-initramfs -u", "sudo reboot"});
  CHECK(text::contains(finding(report, "nvidia-smi").summary, "cannot communicate"));
  const auto& gcc = finding(report, "host-compiler");
  CHECK(text::contains(gcc.summary, "gcc 12.3.0 is newer than CUDA 11.8 accepts (gcc <= 11)"));
  CHECK(gcc.fix ==
        std::vector<std::string>{"export NVCC_PREPEND_FLAGS='-ccbin g++-11' CUDAHOSTCXX=g++-11"});
  CHECK(report.has_failure());
}

TEST_CASE("doctor: a kernel update left DKMS without a module, two driver versions installed") {
  const auto report = doctor_on("doctor-dkms-kernel-update", {});
  const auto& dkms = finding(report, "dkms");
  CHECK(dkms.status == doctor::CheckStatus::fail);
  CHECK(text::contains(dkms.summary,
                       "DKMS built nvidia for 5.15.0-102-generic but not for the "
                       "running kernel 5.15.0-105-generic"));
  CHECK(dkms.fix.at(1) == "sudo dkms autoinstall -k 5.15.0-105-generic");
  const auto& packages = finding(report, "driver-packages");
  CHECK(packages.status == doctor::CheckStatus::fail);
  CHECK(text::contains(packages.summary,
                       "2 NVIDIA driver versions are installed (535.183.01, 550.120)"));
  CHECK(packages.fix.front() == "sudo apt-get purge -y libnvidia-compute-535   # keeps 550.120");
  CHECK(any_contains(packages.evidence, "runfile installer file: /usr/bin/nvidia-uninstall"));
  CHECK(text::contains(finding(report, "kernel-module").summary,
                       "no nvidia.ko is built for kernel 5.15.0-105-generic"));
}

TEST_CASE("doctor: Secure Boot refuses the unsigned nvidia module") {
  const auto report = doctor_on("doctor-secureboot-unsigned", {});
  const auto& sb = finding(report, "secure-boot");
  CHECK(sb.status == doctor::CheckStatus::fail);
  CHECK(any_contains(sb.evidence, "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c: value byte 1"));
  CHECK(any_contains(sb.evidence,
                     "/lib/modules/5.15.0-105-generic/updates/dkms/nvidia.ko: not signed"));
  CHECK(any_contains(sb.fix, "mokutil --import"));
  CHECK(text::contains(finding(report, "kernel-module").summary, "refused an unsigned module"));
  CHECK(finding(report, "dkms").status == doctor::CheckStatus::ok);
}

TEST_CASE("doctor: a Tesla K80 on driver 470 with CUDA 12.4 active") {
  const auto report = doctor_on("doctor-toolkit-mismatch",
                                {{"PATH", std::string("/usr/local/cuda-12.4/bin:") + debian_path},
                                 {"LD_LIBRARY_PATH", "/usr/local/cuda-11.4/lib64"}});
  CHECK(report.active.toolkit->path == "/usr/local/cuda-12.4");
  CHECK(verdict(report) ==
        "kernel-module=ok nouveau=ok secure-boot=ok dkms=ok driver-packages=ok device-nodes=ok "
        "nvidia-smi=ok driver-toolkit=fail forward-compat=skip gpu-arch=fail cuda-link=warn "
        "library-path=warn "
        "host-compiler=ok glibc-headers=skip framework=fail framework-binaries=skip "
        "cudnn-copies=skip triton-ptxas=skip stores=skip shell-hook=ok");
  const auto& driver = finding(report, "driver-toolkit");
  CHECK(driver.summary ==
        "driver 470.256.02 is too old for CUDA 12.4.1: it needs >= 550.54.15 (minor-version "
        "compatibility >= 525.60.13)");
  CHECK(driver.fix.front() == "sudo apt-get install -y nvidia-driver-550");
  const auto& arch = finding(report, "gpu-arch");
  CHECK(text::contains(arch.summary, "sm_37"));
  CHECK(arch.fix.front() == "cudaenv install 11.8");
  const auto& link = finding(report, "cuda-link");
  CHECK(text::contains(link.summary, "/usr/local/cuda leads to CUDA 11.4.4"));
  CHECK(link.fix == std::vector<std::string>{"sudo ln -sfn /usr/local/cuda-12.4 /usr/local/cuda"});
  const auto& library = finding(report, "library-path");
  CHECK(text::contains(library.summary,
                       "LD_LIBRARY_PATH: /usr/local/cuda-11.4/lib64 holds CUDA "
                       "11.4.4's libraries"));
  CHECK(text::contains(library.summary,
                       "/usr/local/cuda-10.2/targets/x86_64-linux/lib does not exist"));
  CHECK(library.fix == std::vector<std::string>{"unset LD_LIBRARY_PATH",
                                                "sudo rm /etc/ld.so.conf.d/cuda-10-2.conf",
                                                "sudo ldconfig"});
  const auto& framework = finding(report, "framework");
  CHECK(text::contains(framework.summary, "driver 470.256.02 is too old for torch's CUDA 12.8"));
  CHECK(text::contains(framework.summary, "torch has no kernels for GPU 0 (sm_37)"));
}

TEST_CASE(
    "doctor: CUDAENV_VERSION that matches no toolkit is reported missing, with what builds get "
    "meanwhile") {
  const auto report = doctor_on("doctor-healthy-2404", {{"CUDAENV_VERSION", "12.1"}});
  // No toolkit stands in for the missing selection: every command says it is not installed.
  CHECK_FALSE(report.active.toolkit);
  REQUIRE(report.active.missing);
  CHECK(report.active.selected_by == "CUDAENV_VERSION=12.1");
  REQUIRE(report.active.notes.size() == 1);
  CHECK(
      text::contains(report.active.notes[0], "CUDA 12.1 (from CUDAENV_VERSION) is not installed"));
  CHECK(text::contains(report.active.notes[0],
                       "builds here get the system's toolkit /usr/local/cuda-13.0 (nvcc on PATH)"));
  const auto& driver_toolkit = finding(report, "driver-toolkit");
  CHECK(driver_toolkit.status == doctor::CheckStatus::warn);
  CHECK(
      text::contains(driver_toolkit.summary, "CUDA 12.1 (from CUDAENV_VERSION) is not installed"));
  CHECK(driver_toolkit.fix == std::vector<std::string>{"cudaenv install 12.1"});
}

TEST_CASE(
    "doctor: without nvcc on PATH the active toolkit is CUDA_HOME's, then /usr/local/cuda's") {
  CHECK(doctor_on("doctor-healthy-2404",
                  {{"PATH", debian_path}, {"CUDA_HOME", "/usr/local/cuda-12.4"}})
            .active.selected_by == "CUDA_HOME");
  const auto report = doctor_on("doctor-healthy-2404", {{"PATH", debian_path}});
  CHECK(report.active.selected_by == "/usr/local/cuda");
  CHECK(report.active.toolkit->path == "/usr/local/cuda-13.0");
}

TEST_CASE(
    "doctor: a stored toolkit this node's driver cannot run is a warning naming the newest it "
    "can") {
  doctor::DoctorFacts facts;
  probe::DriverFacts driver;
  driver.version = "470.57.02";
  facts.machine.driver = driver;
  facts.stored = {
      {*Version::parse("12.4.1"), "/opt/cudaenv/toolkits/12.4.1", "system store /opt/cudaenv"},
      {*Version::parse("11.8.0"), "/home/a/.local/share/cudaenv/toolkits/11.8.0",
       "user store /home/a/.local/share/cudaenv"}};
  const doctor::ActiveToolkit active{};
  const auto f = doctor::check_stores({facts, database(), active});
  CHECK(f.status == doctor::CheckStatus::warn);
  CHECK(f.summary == "driver 470.57.02 cannot run CUDA 12.4.1");
  CHECK(any_contains(f.evidence, "cuda 12.4.1 (system store /opt/cudaenv): the driver is too old"));
  CHECK(any_contains(f.evidence,
                     "cuda 11.8.0 (user store /home/a/.local/share/cudaenv): served under "
                     "minor-version compatibility"));
  CHECK(any_contains(f.fix, "use CUDA 11.8.0"));
}

namespace {

doctor::Finding shell_finding(const doctor::ShellFacts& shell) {
  doctor::DoctorFacts facts;
  facts.shell = shell;
  const doctor::ActiveToolkit active{};
  return doctor::check_shell_hook({facts, database(), active});
}

doctor::ShellFacts project_shell() {
  doctor::ShellFacts shell;
  shell.decided = true;
  shell.selected = "12.4 (from /repo/.cudaenv)";
  shell.wanted_home = "/store/toolkits/12.4.1";
  shell.wanted_active = "12.4.1";
  shell.wanted_nvcc = "/store/toolkits/12.4.1/bin/nvcc";
  shell.shell = "zsh";
  return shell;
}

}  // namespace

TEST_CASE("doctor: a shell without the hook in a project is named, with the line to add") {
  auto shell = project_shell();
  shell.nvcc = "/usr/local/cuda/bin/nvcc";
  const auto f = shell_finding(shell);
  CHECK(f.status == doctor::CheckStatus::warn);
  CHECK(text::contains(f.summary, "the shell hook is not installed"));
  CHECK(text::contains(f.summary, "/usr/local/cuda/bin/nvcc"));
  REQUIRE(f.fix.size() == 2);
  CHECK(f.fix[1] == "echo 'eval \"$(cudaenv init zsh)\"' >> ~/.zshrc");
}

TEST_CASE("doctor: a stale hook and a later rc line are told apart") {
  auto stale = project_shell();
  stale.home = "/store/toolkits/12.1.1";
  stale.active = "12.1.1";
  stale.nvcc = "/store/toolkits/12.1.1/bin/nvcc";
  stale.hook_ran = true;
  auto f = shell_finding(stale);
  CHECK(f.status == doctor::CheckStatus::warn);
  CHECK(text::contains(f.summary, "the shell hook is stale: this shell carries CUDA 12.1.1"));
  CHECK(f.fix.front() == "eval \"$(cudaenv hook-env --shell zsh)\"");

  auto overridden = project_shell();
  overridden.home = overridden.wanted_home;
  overridden.active = overridden.wanted_active;
  overridden.nvcc = "/opt/other/bin/nvcc";
  overridden.hook_ran = true;
  f = shell_finding(overridden);
  CHECK(text::contains(f.summary, "a later line of ~/.zshrc overrides the hook"));

  auto fine = project_shell();
  fine.home = fine.wanted_home;
  fine.active = fine.wanted_active;
  fine.nvcc = fine.wanted_nvcc;
  CHECK(shell_finding(fine).status == doctor::CheckStatus::ok);
  CHECK(shell_finding(doctor::ShellFacts{}).status == doctor::CheckStatus::skip);
}

TEST_CASE("doctor: the host-compiler check judges the compiler activation hands nvcc") {
  // CUDA 11.8 pinned, c++ is GCC 13 (too new), g++-11 installed: activation chooses g++-11, so
  // the check passes on it instead of failing on the default.
  doctor::DoctorFacts facts;
  facts.machine.compilers = {{"g++", "gcc", "/usr/bin/g++", *Version::parse("13.2.0")},
                             {"g++-11", "gcc", "/usr/bin/g++-11", *Version::parse("11.4.0")}};
  facts.activation_compiler = "/usr/bin/g++-11";
  facts.activation_compiler_reason = "c++ is GCC 13, newer than CUDA 11.8 accepts";
  probe::ToolkitFacts toolkit;
  toolkit.path = "/store/toolkits/11.8.0";
  toolkit.version = *Version::parse("11.8.0");
  doctor::ActiveToolkit active;
  active.toolkit = toolkit;
  active.selected = true;
  const auto f = doctor::check_host_compiler({facts, database(), active});
  CHECK(f.status == doctor::CheckStatus::ok);
  CHECK(text::contains(f.summary, "gcc 11.4.0 is accepted by CUDA 11.8"));
  // The system's toolkit (nothing selected) is judged on what the shell's nvcc runs: c++.
  active.selected = false;
  facts.machine.compilers.front().name = "gcc";
  CHECK(doctor::check_host_compiler({facts, database(), active}).status ==
        doctor::CheckStatus::fail);
}

TEST_CASE("one answer of the interpreter: its sites and torch's version file, then the archs") {
  probe::PythonFrameworkFacts python;
  REQUIRE(probe::parse_framework_report(
      "a framework's own warning\n"
      R"({"python": "3.12.3", "sites": ["/v/lib/python3.12/site-packages",)"
      R"( "/v/lib/python3.12/site-packages"], "torch": {"version": "2.11.0+cu130", "cuda": "13.0",)"
      R"( "arch_list": []}, "torch_error": null})",
      python));
  CHECK(python.sites_reported);
  CHECK(python.site_packages == std::vector<std::string>{"/v/lib/python3.12/site-packages"});
  CHECK(python.torch_found);
  CHECK(python.torch_cuda == Version::parse("13.0"));
  CHECK(python.torch_arch_list.empty());

  doctor::BinaryFacts binaries;
  const auto code = [](scan::CodeKind kind, int arch) {
    scan::GpuCode c;
    c.kind = kind;
    c.arch = arch;
    return c;
  };
  binaries.framework_binaries.push_back({"/v/lib/python3.12/site-packages/torch/lib/libc10_cuda.so",
                                         {code(scan::CodeKind::sass, 50)},
                                         {},
                                         {},
                                         false});
  binaries.framework_binaries.push_back(
      {"/v/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
       {code(scan::CodeKind::sass, 80), code(scan::CodeKind::sass, 90),
        code(scan::CodeKind::sass, 100), code(scan::CodeKind::ptx, 120)},
       {},
       {},
       false});
  doctor::read_torch_archs_from_binaries(binaries, python);
  CHECK(python.torch_arch_list ==
        std::vector<std::string>{"sm_80", "sm_90", "sm_100", "compute_120"});
  CHECK(python.torch_arch_source == "/v/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so");

  // The import's own list (a torch without a version file) is kept as it was reported.
  probe::PythonFrameworkFacts imported;
  REQUIRE(probe::parse_framework_report(
      R"({"python": "3.12.3", "torch": {"version": "2.8.0", "cuda": "12.8", "arch_list": ["sm_90"]}})",
      imported));
  CHECK_FALSE(imported.sites_reported);
  doctor::read_torch_archs_from_binaries(binaries, imported);
  CHECK(imported.torch_arch_list == std::vector<std::string>{"sm_90"});
  CHECK(imported.torch_arch_source.empty());
}
