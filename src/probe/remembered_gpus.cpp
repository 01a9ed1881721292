#include "probe/remembered_gpus.hpp"

#include <algorithm>

#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "probe/kernel_module.hpp"

namespace cudaenv::probe {

namespace {

std::string boot_id_of(const Sysroot& sysroot) {
  const auto id = sysroot.read_file("/proc/sys/kernel/random/boot_id").value_or("");
  return text::printable(text::trim(id), 64);
}

std::vector<Version> sorted_unique(std::vector<Version> archs) {
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  return archs;
}

}  // namespace

std::filesystem::path remembered_gpus_file(const std::filesystem::path& data_root) {
  return data_root / "cache" / "gpu-archs";
}

std::string render_remembered_gpus(const std::string& boot_id, const std::string& driver,
                                   const std::vector<Version>& archs) {
  std::string out = "boot_id " + boot_id + "\ndriver " + driver + "\n";
  for (const auto& arch : sorted_unique(archs)) out += "arch " + arch.str() + "\n";
  return out;
}

std::vector<Version> parse_remembered_gpus(std::string_view text, std::string_view boot_id,
                                           std::string_view driver) {
  bool boot_matches = false;
  bool driver_matches = false;
  std::vector<Version> archs;
  for (const auto& line : text::lines(text)) {
    const auto fields = text::split_whitespace(line);
    const auto value = fields.size() == 2 ? fields[1] : std::string();
    if (fields.size() == 1 && fields[0] == "boot_id") boot_matches = boot_id.empty();
    if (fields.size() != 2) continue;
    if (fields[0] == "boot_id") boot_matches = value == boot_id;
    if (fields[0] == "driver") driver_matches = value == driver;
    if (fields[0] != "arch") continue;
    auto arch = Version::parse(value);
    if (!arch || arch->size() != 2) return {};  // not ours: trust none of it
    archs.push_back(*arch);
  }
  if (!boot_matches || !driver_matches) return {};
  return sorted_unique(std::move(archs));
}

Status remember_gpu_archs(const Sysroot& sysroot, const std::filesystem::path& data_root,
                          const std::vector<Version>& archs) {
  // Keyed by what the hook reads (the module's version), not by what a library reported.
  const auto driver = kernel_module_driver_version(sysroot);
  // No data root yet: a probe does not create one just for this record.
  std::error_code error;
  if (archs.empty() || !driver || !std::filesystem::is_directory(data_root, error)) return Ok{};
  const auto file = remembered_gpus_file(data_root);
  const auto text = render_remembered_gpus(boot_id_of(sysroot), *driver, archs);
  if (auto old = read_small_file(file); old && *old == text) return Ok{};
  return write_file_atomically(file, text);
}

std::vector<Version> remembered_gpu_archs(const Sysroot& sysroot,
                                          const std::filesystem::path& data_root,
                                          const std::string& driver) {
  auto text = read_small_file(remembered_gpus_file(data_root));
  if (!text) return {};
  return parse_remembered_gpus(*text, boot_id_of(sysroot), driver);
}

}  // namespace cudaenv::probe
