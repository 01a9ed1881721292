#pragma once
// How the kernel side of the NVIDIA stack is set up: nouveau blacklisting in modprobe.d, Secure
// Boot, the nvidia.ko built for the running kernel (by DKMS or a prebuilt package), the NVIDIA
// devices on the PCI bus, whether this is a container, and what the kernel log says.

#include <string_view>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/host_facts.hpp"

namespace cudaenv::probe {

// Scans /etc/modprobe.d, /run/modprobe.d, /usr/lib/modprobe.d and /lib/modprobe.d.
ModprobeFacts probe_modprobe(const Sysroot& sysroot);
// The lines of one modprobe.d file that keep nouveau away from the GPU.
std::vector<std::string> nouveau_blacklist_lines(std::string_view conf);

// The EFI variable first (its 5th byte is 1 when Secure Boot is on), then `mokutil --sb-state`.
SecureBootFacts probe_secure_boot(const Sysroot& sysroot, ProcessRunner& runner,
                                  const Environment& env);
// Reads the SecureBoot EFI variable's bytes: 4 bytes of attributes, then the value.
SecureBootState parse_secure_boot_variable(std::string_view bytes);
// "SecureBoot enabled" / "SecureBoot disabled" / "EFI variables are not supported ...".
SecureBootState parse_mokutil_sb_state(std::string_view output);

std::optional<ModuleFileFacts> probe_module_file(const Sysroot& sysroot, const std::string& kernel);
DkmsFacts probe_dkms(const Sysroot& sysroot);

// Display-class devices with NVIDIA's PCI vendor id (0x10de) in /sys/bus/pci/devices.
std::vector<std::string> probe_nvidia_pci_devices(const Sysroot& sysroot);

// NVIDIA-related lines of the kernel log (`dmesg`), or why it could not be read.
void probe_kernel_messages(const Sysroot& sysroot, ProcessRunner& runner, const Environment& env,
                           HostFacts& facts);

}  // namespace cudaenv::probe
