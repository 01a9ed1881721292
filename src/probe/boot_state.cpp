#include "probe/boot_state.hpp"

#include "core/text.hpp"
#include "probe/executables.hpp"

namespace cudaenv::probe {

namespace {

constexpr const char* secure_boot_variable =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
constexpr std::string_view signature_marker = "~Module signature appended~\n";
const std::vector<std::string> system_tool_dirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};

ModuleSignature signature_of(const Sysroot& sysroot, const std::string& path) {
  // Compressed modules carry the marker inside the compressed stream.
  if (!text::ends_with(path, ".ko")) return ModuleSignature::unknown;
  const auto tail = sysroot.read_tail(path, signature_marker.size());
  if (!tail) return ModuleSignature::unknown;
  return *tail == signature_marker ? ModuleSignature::signed_module
                                   : ModuleSignature::unsigned_module;
}

// Where packages put nvidia.ko: DKMS builds (updates/dkms), Debian's (updates/dkms too), Ubuntu's
// prebuilt signed modules (kernel/nvidia-<branch>[srv]), and older layouts (extra, video).
std::vector<std::string> module_directories(const Sysroot& sysroot, const std::string& kernel) {
  const auto base = "/lib/modules/" + kernel;
  std::vector<std::string> directories = {base + "/updates/dkms", base + "/updates",
                                          base + "/extra", base + "/kernel/drivers/video"};
  for (const auto& name : sysroot.list_directory(base + "/kernel")) {
    if (text::starts_with(name, "nvidia")) directories.push_back(base + "/kernel/" + name);
  }
  return directories;
}

}  // namespace

std::vector<std::string> nouveau_blacklist_lines(std::string_view conf) {
  std::vector<std::string> found;
  for (const auto& raw : text::lines(conf)) {
    const auto fields = text::split_whitespace(text::trim(raw));
    if (fields.size() < 2 || fields[1] != "nouveau") continue;
    const bool blacklist = fields[0] == "blacklist";
    const bool no_modeset = fields[0] == "options" && text::contains(raw, "modeset=0");
    const bool disabled =
        fields[0] == "install" && fields.size() >= 3 &&
        (text::contains(fields[2], "/bin/false") || text::contains(fields[2], "/bin/true"));
    if (blacklist || no_modeset || disabled) found.emplace_back(text::trim(raw));
  }
  return found;
}

ModprobeFacts probe_modprobe(const Sysroot& sysroot) {
  ModprobeFacts facts;
  for (const char* directory :
       {"/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"}) {
    for (const auto& name : sysroot.list_directory(directory)) {
      if (!text::ends_with(name, ".conf")) continue;
      const auto path = std::string(directory) + "/" + name;
      const auto content = sysroot.read_file(path);
      if (!content) continue;
      facts.files_read.push_back(path);
      for (auto& line : nouveau_blacklist_lines(*content))
        facts.nouveau_blacklist.push_back({path, std::move(line)});
    }
  }
  return facts;
}

SecureBootState parse_secure_boot_variable(std::string_view bytes) {
  if (bytes.size() < 5) return SecureBootState::unknown;
  return bytes[4] == 1 ? SecureBootState::enabled : SecureBootState::disabled;
}

SecureBootState parse_mokutil_sb_state(std::string_view output) {
  if (text::contains(output, "SecureBoot enabled")) return SecureBootState::enabled;
  if (text::contains(output, "SecureBoot disabled")) return SecureBootState::disabled;
  if (text::contains(output, "not supported")) return SecureBootState::no_efi;
  return SecureBootState::unknown;
}

SecureBootFacts probe_secure_boot(const Sysroot& sysroot, ProcessRunner& runner,
                                  const Environment& env) {
  SecureBootFacts facts;
  if (auto bytes = sysroot.read_file(secure_boot_variable)) {
    facts.state = parse_secure_boot_variable(*bytes);
    facts.evidence = std::string(secure_boot_variable) + ": value byte " +
                     (bytes->size() >= 5 ? std::to_string(static_cast<int>((*bytes)[4])) : "?");
    return facts;
  }
  if (!sysroot.exists("/sys/firmware/efi")) {
    facts.state = SecureBootState::no_efi;
    facts.evidence = "/sys/firmware/efi absent: booted without UEFI (or not visible here)";
    return facts;
  }
  const auto mokutil = find_tool(sysroot, env, "mokutil", system_tool_dirs);
  if (!mokutil) {
    facts.evidence = std::string(secure_boot_variable) + " unreadable and no mokutil";
    return facts;
  }
  auto result = runner.run(
      Command{{runnable(sysroot, *mokutil), "--sb-state"}, std::nullopt, std::chrono::seconds(5)});
  const auto output = result ? result->out + result->err : result.error().message;
  facts.state = parse_mokutil_sb_state(output);
  facts.evidence = "mokutil --sb-state: " + std::string(text::trim(output));
  return facts;
}

std::optional<ModuleFileFacts> probe_module_file(const Sysroot& sysroot,
                                                 const std::string& kernel) {
  if (kernel.empty()) return std::nullopt;
  for (const auto& directory : module_directories(sysroot, kernel)) {
    for (const char* name : {"nvidia.ko", "nvidia.ko.zst", "nvidia.ko.xz", "nvidia.ko.gz"}) {
      const auto path = directory + "/" + name;
      if (sysroot.exists(path)) return ModuleFileFacts{path, signature_of(sysroot, path)};
    }
  }
  return std::nullopt;
}

DkmsFacts probe_dkms(const Sysroot& sysroot) {
  DkmsFacts facts;
  facts.present = sysroot.is_directory("/var/lib/dkms");
  const std::string base = "/var/lib/dkms/nvidia";
  for (const auto& version : sysroot.list_directory(base)) {
    if (!Version::parse(version)) continue;  // "kernel-<k>-<arch>" links of older DKMS
    facts.registered.push_back(version);
    for (const auto& kernel : sysroot.list_directory(base + "/" + version)) {
      if (kernel == "source" || !sysroot.is_directory(base + "/" + version + "/" + kernel))
        continue;
      for (const auto& arch : sysroot.list_directory(base + "/" + version + "/" + kernel)) {
        const auto module = base + "/" + version + "/" + kernel + "/" + arch + "/module";
        if (sysroot.is_directory(module)) facts.builds.push_back({version, kernel, module});
      }
    }
  }
  return facts;
}

std::vector<std::string> probe_nvidia_pci_devices(const Sysroot& sysroot) {
  std::vector<std::string> devices;
  const std::string base = "/sys/bus/pci/devices";
  for (const auto& name : sysroot.list_directory(base)) {
    const auto vendor = sysroot.read_file(base + "/" + name + "/vendor");
    const auto device_class = sysroot.read_file(base + "/" + name + "/class");
    if (!vendor || !device_class || text::trim(*vendor) != "0x10de") continue;
    const auto cls = std::string(text::trim(*device_class));
    // 0x03xxxx: display controllers (VGA 0x0300, 3D 0x0302); NVIDIA's audio functions are not GPUs.
    if (text::starts_with(cls, "0x03"))
      devices.push_back(base + "/" + name + " (class " + cls + ")");
  }
  return devices;
}

void probe_kernel_messages(const Sysroot& sysroot, ProcessRunner& runner, const Environment& env,
                           HostFacts& facts) {
  const auto dmesg = find_tool(sysroot, env, "dmesg", system_tool_dirs);
  if (!dmesg) {
    facts.kernel_messages_error = "dmesg not found";
    return;
  }
  auto result =
      runner.run(Command{{runnable(sysroot, *dmesg)}, std::nullopt, std::chrono::seconds(5)});
  if (!result || !result->succeeded()) {
    facts.kernel_messages_error =
        "dmesg: " + (result ? std::string(text::trim(result->err)) : result.error().message);
    return;
  }
  for (const auto& line : text::lines(result->out)) {
    for (const char* needle : {"NVRM", "nvidia", "nouveau", "Lockdown", "module verification"}) {
      if (text::contains(line, needle)) {
        facts.kernel_messages.push_back(line);
        break;
      }
    }
  }
  constexpr size_t kept = 12;  // the latest lines say what happened at the last load attempt
  if (facts.kernel_messages.size() > kept) {
    facts.kernel_messages.erase(facts.kernel_messages.begin(),
                                facts.kernel_messages.end() - static_cast<long>(kept));
  }
}

}  // namespace cudaenv::probe
