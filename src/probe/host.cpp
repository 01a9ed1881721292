#include "probe/host.hpp"

#include "core/text.hpp"
#include "probe/boot_state.hpp"
#include "probe/driver_packages.hpp"
#include "probe/linker.hpp"

namespace cudaenv::probe {

namespace {

// Docker writes /.dockerenv and podman /run/.containerenv into every container they start.
void read_container_markers(const Sysroot& sysroot, HostFacts& facts) {
  for (const char* marker : {"/.dockerenv", "/run/.containerenv"}) {
    if (sysroot.exists(marker)) {
      facts.in_container = true;
      facts.container_evidence = marker;
      return;
    }
  }
}

}  // namespace

HostFacts probe_host(const ProbeContext& context, const MachineFacts& machine) {
  const auto& sysroot = context.sysroot;
  HostFacts facts;
  read_container_markers(sysroot, facts);
  facts.nvidia_pci_devices = probe_nvidia_pci_devices(sysroot);
  if (machine.modules.modules_readable && !machine.modules.nvidia) {
    probe_kernel_messages(sysroot, context.runner, context.env, facts);
  }
  facts.modprobe = probe_modprobe(sysroot);
  facts.secure_boot = probe_secure_boot(sysroot, context.runner, context.env);
  facts.module_file = probe_module_file(sysroot, machine.os.kernel);
  facts.dkms = probe_dkms(sysroot);
  facts.driver_packages = probe_driver_packages(sysroot);
  facts.linker = probe_linker(sysroot, context.env);
  facts.has_ubuntu_drivers = sysroot.is_executable_file("/usr/bin/ubuntu-drivers");
  facts.boot_id = text::trim(sysroot.read_file("/proc/sys/kernel/random/boot_id").value_or(""));
  return facts;
}

const char* to_string(SecureBootState state) {
  switch (state) {
    case SecureBootState::unknown: return "unknown";
    case SecureBootState::disabled: return "disabled";
    case SecureBootState::enabled: return "enabled";
    case SecureBootState::no_efi: return "no-efi";
  }
  return "unknown";
}

const char* to_string(SmiOutcome outcome) {
  switch (outcome) {
    case SmiOutcome::not_found: return "not-found";
    case SmiOutcome::ok: return "ok";
    case SmiOutcome::no_communication: return "no-communication";
    case SmiOutcome::version_mismatch: return "version-mismatch";
    case SmiOutcome::failed: return "failed";
  }
  return "unknown";
}

}  // namespace cudaenv::probe
