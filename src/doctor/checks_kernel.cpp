// Checks of the kernel side: the nvidia module, nouveau, Secure Boot and DKMS.

#include <algorithm>

#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "doctor/remedies.hpp"

namespace cudaenv::doctor {

namespace {

std::string loaded_modules(const probe::KernelModuleFacts& m) {
  std::vector<std::string> names;
  for (const auto& [name, loaded] : {std::pair{"nvidia", m.nvidia},
                                     {"nvidia_uvm", m.nvidia_uvm},
                                     {"nvidia_modeset", m.nvidia_modeset},
                                     {"nvidia_drm", m.nvidia_drm},
                                     {"nouveau", m.nouveau}}) {
    if (loaded) names.emplace_back(name);
  }
  return "/proc/modules: " + (names.empty() ? std::string("no nvidia or nouveau module")
                                            : text::join(names, ", ") + " loaded");
}

bool kernel_log_mentions(const probe::HostFacts& host, std::initializer_list<const char*> needles) {
  for (const auto& line : host.kernel_messages) {
    for (const char* needle : needles) {
      if (text::contains(line, needle)) return true;
    }
  }
  return false;
}

// The likeliest reason an installed driver's module is not running, from what else was read.
std::string why_not_loaded(const DoctorFacts& facts) {
  const auto& host = facts.host;
  if (facts.machine.modules.nouveau) return "nouveau is loaded and holds the GPU";
  if (kernel_log_mentions(host, {"Lockdown", "Key was rejected", "module verification failed"}))
    return "the kernel refused an unsigned module (Secure Boot)";
  if (kernel_log_mentions(host, {"API mismatch"}))
    return "the kernel module and the driver libraries are different versions";
  if (!host.module_file && !host.in_container)
    return "no nvidia.ko is built for kernel " + facts.machine.os.kernel;
  return "see the kernel log below";
}

void add_kernel_log(const probe::HostFacts& host, Finding& f) {
  if (!host.kernel_messages_error.empty()) f.evidence.push_back(host.kernel_messages_error);
  for (const auto& line : host.kernel_messages) f.evidence.push_back("dmesg: " + line);
  if (host.kernel_messages.empty() && host.kernel_messages_error.empty())
    f.evidence.emplace_back("dmesg: no NVIDIA-related messages");
}

void module_not_loaded(const DoctorFacts& facts, Finding& f) {
  conclude(f, CheckStatus::fail,
           "the NVIDIA driver is installed but its kernel module is not loaded: " +
               why_not_loaded(facts));
  const auto& module = facts.host.module_file;
  f.evidence.push_back(module ? "module file: " + module->path
                              : "no nvidia.ko under /lib/modules/" + facts.machine.os.kernel);
  add_kernel_log(facts.host, f);
  f.fix = {
      "sudo modprobe nvidia",
      "# if it fails, fix what the nouveau, Secure Boot and DKMS findings report, then reboot"};
}

}  // namespace

bool driver_installed(const DoctorFacts& facts) {
  return facts.machine.driver.has_value() || !facts.host.driver_packages.packages.empty();
}

Finding check_kernel_module(const CheckInput& in) {
  auto f = finding("kernel-module", "NVIDIA kernel module loaded");
  if (on_wsl(in.facts)) {
    wsl_kernel_module(in, f);
    return f;
  }
  const auto& machine = in.facts.machine;
  const auto& modules = machine.modules;
  f.evidence.push_back(modules.modules_readable ? loaded_modules(modules)
                                                : "/proc/modules: unreadable");
  const bool driver_answers = machine.driver && machine.driver->loaded &&
                              machine.driver->version_source != probe::DriverSource::library_file;
  if (modules.nvidia || (!modules.modules_readable && driver_answers)) {
    const auto version = machine.driver ? " (driver " + machine.driver->version + ")" : "";
    conclude(f, CheckStatus::ok, "the nvidia module is running" + version);
    if (modules.modules_readable && !modules.nvidia_uvm) {
      conclude(f, CheckStatus::warn,
               "nvidia is loaded but nvidia_uvm is not: CUDA programs fail in cuInit until it is");
      f.fix = {"sudo modprobe nvidia-uvm"};
    }
    return f;
  }
  const auto& pci = in.facts.host.nvidia_pci_devices;
  for (const auto& device : pci) f.evidence.push_back("NVIDIA GPU on the PCI bus: " + device);
  if (!driver_installed(in.facts)) {
    if (pci.empty()) {
      conclude(f, CheckStatus::skip, "no NVIDIA driver installed and no NVIDIA GPU on the PCI bus");
      f.evidence.emplace_back("/sys/bus/pci/devices: no NVIDIA display device");
    } else {
      conclude(f, CheckStatus::fail, "an NVIDIA GPU is present but no NVIDIA driver is installed");
      f.fix = {"cudaenv bootstrap --dry-run   # shows the driver install steps for this OS",
               "cudaenv bootstrap"};
    }
    return f;
  }
  if (!modules.modules_readable) {
    conclude(f, CheckStatus::skip, "/proc/modules cannot be read and the driver does not answer");
    return f;
  }
  module_not_loaded(in.facts, f);
  return f;
}

Finding check_nouveau(const CheckInput& in) {
  auto f = finding("nouveau", "nouveau kept off the GPU");
  if (on_wsl(in.facts)) {
    skip_on_wsl(in.facts, f, "no Linux GPU driver, nouveau included, drives the GPU here");
    return f;
  }
  const auto& modules = in.facts.machine.modules;
  const auto& host = in.facts.host;
  f.evidence.push_back(modules.modules_readable ? std::string("/proc/modules: nouveau ") +
                                                      (modules.nouveau ? "loaded" : "not loaded")
                                                : "/proc/modules: unreadable");
  for (const auto& line : host.modprobe.nouveau_blacklist)
    f.evidence.push_back(line.file + ": " + line.line);
  const bool blacklisted = !host.modprobe.nouveau_blacklist.empty();
  const std::vector<std::string> blacklist_fix = {remedy::nouveau_blacklist_command,
                                                  "sudo update-initramfs -u", "sudo reboot"};
  if (modules.nouveau) {
    if (driver_installed(in.facts)) {
      conclude(f, CheckStatus::fail,
               "nouveau is loaded, so the installed NVIDIA driver cannot take the GPU");
      f.fix = blacklist_fix;
    } else {
      conclude(f, CheckStatus::warn,
               "nouveau drives the GPU; CUDA needs the NVIDIA driver instead");
      f.fix = {"cudaenv bootstrap"};
    }
    return f;
  }
  if (!driver_installed(in.facts)) {
    conclude(f, CheckStatus::skip, "no NVIDIA driver installed");
  } else if (blacklisted) {
    conclude(f, CheckStatus::ok, "nouveau is blacklisted and not loaded");
  } else if (host.in_container) {
    conclude(f, CheckStatus::ok,
             "nouveau is not loaded; its blacklist is the host's business (inside a container: " +
                 host.container_evidence + ")");
  } else {
    conclude(f, CheckStatus::warn,
             "nouveau is not loaded now, but nothing in modprobe.d blacklists it: it can take the "
             "GPU at boot whenever the NVIDIA module fails to load");
    f.evidence.push_back("scanned " + std::to_string(host.modprobe.files_read.size()) +
                         " modprobe.d files: no 'blacklist nouveau'");
    f.fix = blacklist_fix;
    f.fix.pop_back();  // nothing is broken now: no reboot needed
  }
  return f;
}

Finding check_secure_boot(const CheckInput& in) {
  auto f = finding("secure-boot", "Secure Boot accepts the NVIDIA module");
  if (on_wsl(in.facts)) {
    skip_on_wsl(in.facts, f, "Secure Boot concerns the Windows driver, not this Linux kernel");
    return f;
  }
  const auto& host = in.facts.host;
  const auto& sb = host.secure_boot;
  if (host.in_container) {
    conclude(
        f, CheckStatus::skip,
        "inside a container (" + host.container_evidence + "): Secure Boot belongs to the host");
    return f;
  }
  f.evidence.push_back(sb.evidence);
  if (host.module_file) {
    const char* signature = host.module_file->signature == probe::ModuleSignature::signed_module
                                ? "signed"
                            : host.module_file->signature == probe::ModuleSignature::unsigned_module
                                ? "not signed"
                                : "signature not readable (compressed)";
    f.evidence.push_back(host.module_file->path + ": " + signature);
  }
  switch (sb.state) {
    case probe::SecureBootState::no_efi:
      conclude(f, CheckStatus::ok, "booted without UEFI: Secure Boot does not apply");
      return f;
    case probe::SecureBootState::disabled:
      conclude(f, CheckStatus::ok, "Secure Boot is disabled: any module loads");
      return f;
    case probe::SecureBootState::unknown:
      conclude(f, CheckStatus::skip, "the Secure Boot state could not be read");
      return f;
    case probe::SecureBootState::enabled: break;
  }
  if (in.facts.machine.modules.nvidia) {
    conclude(f, CheckStatus::ok, "Secure Boot is on and the kernel accepted the nvidia module");
    return f;
  }
  if (!driver_installed(in.facts)) {
    conclude(f, CheckStatus::skip, "Secure Boot is on; no NVIDIA driver installed yet");
    return f;
  }
  const bool known_unsigned =
      host.module_file && host.module_file->signature == probe::ModuleSignature::unsigned_module;
  const bool refused =
      std::any_of(host.kernel_messages.begin(), host.kernel_messages.end(), [](const auto& line) {
        return text::contains(line, "Lockdown") || text::contains(line, "Key was rejected") ||
               text::contains(line, "module verification failed");
      });
  conclude(f, known_unsigned || refused ? CheckStatus::fail : CheckStatus::warn,
           known_unsigned || refused
               ? "Secure Boot is on and the nvidia module is unsigned: the kernel refuses it"
               : "Secure Boot is on and the nvidia module is not loaded: an unsigned module is "
                 "refused");
  f.fix = {"sudo mokutil --import /var/lib/shim-signed/mok/MOK.der   # the key DKMS signs with",
           "sudo dkms autoinstall   # rebuild and sign the module",
           "sudo reboot   # confirm the key in the MOK manager at boot",
           "# or turn Secure Boot off in the firmware setup"};
  return f;
}

Finding check_dkms(const CheckInput& in) {
  auto f = finding("dkms", "nvidia module built for the running kernel");
  if (on_wsl(in.facts)) {
    skip_on_wsl(in.facts, f, "the WSL kernel loads no nvidia module, so none is built for it");
    return f;
  }
  const auto& host = in.facts.host;
  const auto& kernel = in.facts.machine.os.kernel;
  if (host.in_container) {
    conclude(
        f, CheckStatus::skip,
        "inside a container (" + host.container_evidence + "): kernel modules belong to the host");
    return f;
  }
  if (kernel.empty() || !driver_installed(in.facts)) {
    conclude(f, CheckStatus::skip,
             kernel.empty() ? "the running kernel is unknown" : "no NVIDIA driver installed");
    return f;
  }
  f.evidence.push_back("running kernel: " + kernel + " (/proc/sys/kernel/osrelease)");
  std::vector<std::string> built_for;
  bool built_here = false;
  std::string built_version;
  for (const auto& build : host.dkms.builds) {
    f.evidence.push_back("DKMS build: " + build.path);
    built_for.push_back(build.kernel);
    if (build.kernel == kernel) {
      built_here = true;
      built_version = build.module_version;
    }
  }
  if (host.module_file) {
    f.evidence.push_back("module file: " + host.module_file->path);
    conclude(f, CheckStatus::ok, "an nvidia module is installed for kernel " + kernel);
    return f;
  }
  f.evidence.push_back("no nvidia.ko under /lib/modules/" + kernel);
  if (built_here) {
    conclude(f, CheckStatus::warn,
             "DKMS built nvidia " + built_version + " for " + kernel + " but it is not installed");
    f.fix = {"sudo dkms install nvidia/" + built_version + " -k " + kernel, "sudo modprobe nvidia"};
    return f;
  }
  conclude(f, CheckStatus::fail,
           host.dkms.registered.empty()
               ? "no nvidia module for kernel " + kernel + " and none registered with DKMS"
               : "DKMS built nvidia for " +
                     (built_for.empty() ? std::string("no kernel") : text::join(built_for, ", ")) +
                     " but not for the running kernel " + kernel +
                     " (a kernel update without a rebuilt module)");
  f.fix = {"sudo apt-get install -y linux-headers-" + kernel + " dkms",
           "sudo dkms autoinstall -k " + kernel, "sudo modprobe nvidia"};
  return f;
}

}  // namespace cudaenv::doctor
