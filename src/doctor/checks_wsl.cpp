// The checks' answers inside WSL2, where the Windows NVIDIA driver serves the GPU through
// /dev/dxg and maps its Linux libraries and nvidia-smi in at /usr/lib/wsl/lib. No Linux kernel
// module runs there, so nothing here suggests modprobe, DKMS, nouveau or Secure Boot fixes; a
// Linux driver installed inside WSL is the usual way CUDA breaks there.

#include <algorithm>

#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "probe/wsl.hpp"

namespace cudaenv::doctor {

namespace {

const std::string wsl_directory = probe::wsl_driver_directory;

// What fixes the Windows side: run on Windows (PowerShell or cmd), never inside WSL.
std::vector<std::string> windows_driver_fix() {
  return {"# on Windows, not inside WSL: install the current NVIDIA driver for this GPU",
          "wsl.exe --update     # on Windows: a WSL kernel with GPU support",
          "wsl.exe --shutdown   # on Windows; then open the distribution again"};
}

void add_wsl_evidence(const DoctorFacts& facts, Finding& f) {
  f.evidence.push_back("WSL2: " + facts.machine.wsl.evidence);
}

bool is_windows_nvidia_smi(const std::string& path) {
  return text::starts_with(path, wsl_directory + "/");
}

}  // namespace

bool on_wsl(const DoctorFacts& facts) { return facts.machine.wsl.wsl2; }

void skip_on_wsl(const DoctorFacts& facts, Finding& f, const std::string& why) {
  add_wsl_evidence(facts, f);
  conclude(f, CheckStatus::skip, "WSL2: " + why);
}

void wsl_kernel_module(const CheckInput& in, Finding& f) {
  const auto& machine = in.facts.machine;
  add_wsl_evidence(in.facts, f);
  f.evidence.push_back(wsl_directory + (machine.wsl.driver_store ? ": present" : ": absent"));
  if (machine.driver) {
    f.evidence.push_back("driver library: " + machine.driver->library);
    conclude(f, CheckStatus::ok,
             "WSL2: the Windows NVIDIA driver " + machine.driver->version +
                 " serves the GPU; no Linux kernel module is needed");
    return;
  }
  for (const auto& note : machine.notes) f.evidence.push_back("probe: " + note);
  conclude(f, CheckStatus::fail,
           machine.wsl.driver_store
               ? "WSL2: the Windows NVIDIA driver does not answer through " + wsl_directory
               : "WSL2 without " + wsl_directory +
                     ": Windows has no NVIDIA driver with WSL support installed");
  f.fix = windows_driver_fix();
}

void wsl_device_nodes(const CheckInput& in, Finding& f) {
  add_wsl_evidence(in.facts, f);
  f.evidence.emplace_back(in.facts.machine.wsl.dxg_device ? "/dev/dxg: present"
                                                          : "/dev/dxg: absent");
  if (in.facts.machine.wsl.dxg_device) {
    conclude(f, CheckStatus::ok,
             "WSL2: /dev/dxg reaches the GPU (no /dev/nvidia* nodes are used here)");
    return;
  }
  conclude(f, CheckStatus::fail, "WSL2 without /dev/dxg: this WSL kernel offers no GPU");
  f.fix = windows_driver_fix();
}

void wsl_nvidia_smi(const CheckInput& in, Finding& f) {
  const auto& smi = in.facts.host.nvidia_smi;
  add_wsl_evidence(in.facts, f);
  if (smi.outcome == probe::SmiOutcome::not_found) {
    f.evidence.push_back("nvidia-smi: not on PATH, in /usr/bin or in " + wsl_directory);
    conclude(f, CheckStatus::warn,
             "WSL2: no nvidia-smi in " + wsl_directory + ", where the Windows driver puts it");
    f.fix = windows_driver_fix();
    return;
  }
  f.evidence.push_back("$ " + smi.command + "  -> exit " + std::to_string(smi.exit_code) + ": " +
                       smi.output);
  if (smi.outcome == probe::SmiOutcome::ok) {
    conclude(f, CheckStatus::ok, "nvidia-smi answers: " + smi.output);
    return;
  }
  if (!is_windows_nvidia_smi(smi.path)) {
    conclude(f, CheckStatus::fail,
             "WSL2: " + smi.path +
                 " is a Linux driver's nvidia-smi; it cannot reach the GPU, "
                 "and it hides the Windows driver's " +
                 wsl_directory + "/nvidia-smi");
    f.fix = {wsl_directory + "/nvidia-smi   # the Windows driver's own",
             "# remove the Linux driver: see the driver-packages finding"};
    return;
  }
  conclude(f, CheckStatus::fail, "WSL2: the Windows driver's nvidia-smi failed: " + smi.output);
  f.fix = windows_driver_fix();
}

// Inside WSL the Windows driver is the one driver: every Linux driver package is one too many.
void wsl_driver_packages(const CheckInput& in, Finding& f) {
  const auto& packages = in.facts.host.driver_packages;
  const auto& wsl = in.facts.machine.wsl;
  add_wsl_evidence(in.facts, f);
  std::vector<std::string> names;
  for (const auto& package : packages.packages) {
    f.evidence.push_back("/var/lib/dpkg/status: " + package.name + " " + package.version);
    names.push_back(package.name);
  }
  for (const auto& library : wsl.linux_driver_libraries)
    f.evidence.push_back("a Linux driver's libcuda: " + library);
  const bool runfile =
      std::find(packages.runfile_leftovers.begin(), packages.runfile_leftovers.end(),
                "/usr/bin/nvidia-uninstall") != packages.runfile_leftovers.end();
  if (runfile) f.evidence.emplace_back("runfile installer file: /usr/bin/nvidia-uninstall");
  if (names.empty() && !runfile) {
    conclude(f, CheckStatus::ok,
             "WSL2: no Linux NVIDIA driver installed; the Windows driver serves CUDA");
    return;
  }
  conclude(f, CheckStatus::warn,
           "WSL2: a Linux NVIDIA driver is installed inside WSL (" +
               (names.empty() ? std::string("NVIDIA's .run installer") : text::join(names, ", ")) +
               "): it cannot load here, and its libcuda and nvidia-smi hide the Windows "
               "driver's");
  if (!names.empty()) {
    f.fix.push_back("sudo apt-get purge -y " + text::join(names, " "));
    f.fix.emplace_back("sudo apt-get autoremove --purge -y   # the driver's own dependencies");
  }
  if (runfile) f.fix.emplace_back("sudo /usr/bin/nvidia-uninstall --silent");
  f.fix.emplace_back(
      "# CUDA toolkits inside WSL: cuda-toolkit-X-Y packages or `cudaenv install`, "
      "never cuda, cuda-X-Y or cuda-drivers (they pull the Linux driver)");
}

std::vector<std::string> wsl_driver_update_fix(int branch) {
  return {"# on Windows, not inside WSL: install NVIDIA driver " + std::to_string(branch) +
              " or newer for this GPU",
          "wsl.exe --shutdown   # on Windows; then open the distribution again"};
}

}  // namespace cudaenv::doctor
