#pragma once
// What probe learns about the layers below and around the driver that `cudaenv doctor` and
// `cudaenv bootstrap` reason over: boot configuration, packages, the dynamic linker's search
// path, the tools that talk to the driver, and Python frameworks. Plain values, like facts.hpp.

#include <optional>
#include <string>
#include <vector>

#include "core/version.hpp"

namespace cudaenv::probe {

// A line of a configuration file that matters, with where it was read.
struct ConfigLine {
  std::string file;  // "/etc/modprobe.d/blacklist-nouveau.conf"
  std::string line;  // "blacklist nouveau"
};

struct ModprobeFacts {
  std::vector<ConfigLine> nouveau_blacklist;  // "blacklist nouveau" and "options nouveau modeset=0"
  std::vector<std::string> files_read;        // every *.conf file scanned
};

enum class SecureBootState { unknown, disabled, enabled, no_efi };

struct SecureBootFacts {
  SecureBootState state = SecureBootState::unknown;
  std::string evidence;  // the EFI variable read, or mokutil's answer
};

// The nvidia.ko file for the running kernel, and whether it carries a module signature.
enum class ModuleSignature { unknown, signed_module, unsigned_module };

struct ModuleFileFacts {
  std::string path;  // "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst"
  ModuleSignature signature = ModuleSignature::unknown;  // unknown for compressed files
};

struct DkmsBuild {
  std::string module_version;  // "535.183.01"
  std::string kernel;          // "6.5.0-35-generic"
  std::string path;            // "/var/lib/dkms/nvidia/535.183.01/6.5.0-35-generic/x86_64/module"
};

struct DkmsFacts {
  bool present = false;                 // /var/lib/dkms exists
  std::vector<std::string> registered;  // nvidia versions added to DKMS: "535.183.01"
  std::vector<DkmsBuild> builds;
};

struct InstalledPackage {
  std::string name;
  std::string version;
};

struct DriverPackageFacts {
  bool dpkg_readable = false;              // /var/lib/dpkg/status was read
  std::vector<InstalledPackage> packages;  // nvidia-driver-*, libnvidia-compute-*, nvidia-dkms-*
  std::vector<std::string> runfile_leftovers;  // /usr/bin/nvidia-uninstall, cuda-uninstaller files
};

// A directory the dynamic linker searches, and who put it there.
struct LibrarySearchEntry {
  std::string directory;
  std::string source;  // "LD_LIBRARY_PATH" or the ld.so.conf.d file naming it
  bool exists = false;
  std::string real_directory;  // links resolved; empty when it does not exist
};

// One libcudart file the dynamic linker can reach by its soname.
struct CudartCopy {
  std::string soname;     // "libcudart.so.12"
  std::string directory;  // where the soname link sits
  std::string real_path;  // the file it leads to: ".../libcudart.so.12.4.127"
  std::string source;     // "LD_LIBRARY_PATH", the ld.so.conf.d file, or "default directory"
};

struct LinkerFacts {
  std::vector<LibrarySearchEntry> entries;  // LD_LIBRARY_PATH first, then /etc/ld.so.conf.d
  std::vector<CudartCopy> cudart;           // in the linker's search order
};

enum class SmiOutcome { not_found, ok, no_communication, version_mismatch, failed };

struct NvidiaSmiFacts {
  SmiOutcome outcome = SmiOutcome::not_found;
  std::string path;     // where nvidia-smi was found
  std::string command;  // what was run
  int exit_code = 0;
  std::string output;  // its first meaningful line
};

struct PythonFrameworkFacts {
  bool python_found = false;
  std::string python;          // the interpreter run
  std::string python_version;  // "3.12.3"
  std::string error;           // why the probe script could not report
  bool torch_found = false;
  std::string torch_version;                 // "2.4.1+cu121"
  std::optional<Version> torch_cuda;         // torch.version.cuda; nullopt: a CPU build
  std::vector<std::string> torch_arch_list;  // "sm_80", "compute_90", ...
  // Its site-packages (sysconfig's purelib and platlib, the user site when it exists), asked in
  // the same run; sites_reported is false when the answer held none (a fixture's stand-in).
  std::vector<std::string> site_packages;
  bool sites_reported = false;
  // Where torch_arch_list came from when not from the import: the library whose code was read.
  std::string torch_arch_source;
};

struct HostFacts {
  bool in_container = false;
  std::string container_evidence;               // "/.dockerenv"
  std::vector<std::string> nvidia_pci_devices;  // "/sys/bus/pci/devices/0000:01:00.0 (0x030200)"
  std::vector<std::string> kernel_messages;     // NVIDIA-related dmesg lines
  std::string kernel_messages_error;            // why dmesg could not be read
  ModprobeFacts modprobe;
  SecureBootFacts secure_boot;
  std::optional<ModuleFileFacts> module_file;
  DkmsFacts dkms;
  DriverPackageFacts driver_packages;
  LinkerFacts linker;
  NvidiaSmiFacts nvidia_smi;
  PythonFrameworkFacts python;
  bool has_ubuntu_drivers = false;  // /usr/bin/ubuntu-drivers
  std::string boot_id;              // /proc/sys/kernel/random/boot_id
};

const char* to_string(SecureBootState state);
const char* to_string(SmiOutcome outcome);

}  // namespace cudaenv::probe
