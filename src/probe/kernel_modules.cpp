#include "probe/kernel_modules.hpp"

#include "core/text.hpp"

namespace cudaenv::probe {

void parse_proc_modules(std::string_view text, KernelModuleFacts& facts) {
  const std::pair<std::string_view, bool KernelModuleFacts::*> watched[] = {
      {"nvidia", &KernelModuleFacts::nvidia},
      {"nvidia_uvm", &KernelModuleFacts::nvidia_uvm},
      {"nvidia_modeset", &KernelModuleFacts::nvidia_modeset},
      {"nvidia_drm", &KernelModuleFacts::nvidia_drm},
      {"nouveau", &KernelModuleFacts::nouveau},
  };
  for (const auto& line : text::lines(text)) {
    const auto fields = text::split_whitespace(line);
    if (fields.empty()) continue;
    for (const auto& [name, flag] : watched) {
      if (fields[0] == name) facts.*flag = true;
    }
  }
}

KernelModuleFacts probe_kernel_modules(const Sysroot& sysroot) {
  KernelModuleFacts facts;
  if (auto modules = sysroot.read_file("/proc/modules")) {
    facts.modules_readable = true;
    parse_proc_modules(*modules, facts);
  }
  for (const auto& name : sysroot.list_directory("/dev")) {
    if (text::starts_with(name, "nvidia")) facts.device_nodes.push_back("/dev/" + name);
  }
  return facts;
}

}  // namespace cudaenv::probe
