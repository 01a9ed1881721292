#include "probe/kernel_module.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"
#include "core/version.hpp"

namespace cudaenv::probe {

namespace {

// Both files are one line; what is longer is not the driver's.
constexpr size_t kernel_file_limit = 4096;
constexpr size_t gpu_limit = 64;

}  // namespace

std::optional<std::string> read_proc_driver_version(const Sysroot& sysroot) {
  return sysroot.read_bounded("/proc/driver/nvidia/version", kernel_file_limit);
}

std::optional<std::string> parse_proc_driver_version(std::string_view text) {
  for (const auto& line : text::lines(text)) {
    if (!text::starts_with(text::trim(line), "NVRM version:")) continue;
    const auto fields = text::split_whitespace(line);
    bool after_module = false;
    for (const auto& field : fields) {
      if (field == "Module") {
        after_module = true;
      } else if (after_module && !field.empty() &&
                 std::isdigit(static_cast<unsigned char>(field[0])) && Version::parse(field)) {
        return field;
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> kernel_module_driver_version(const Sysroot& sysroot) {
  if (auto proc = read_proc_driver_version(sysroot)) {
    if (auto version = parse_proc_driver_version(*proc)) return version;
  }
  if (auto sys = sysroot.read_bounded("/sys/module/nvidia/version", kernel_file_limit)) {
    auto version = std::string(text::trim(*sys));
    if (Version::parse(version)) return version;
  }
  return std::nullopt;
}

std::string parse_gpu_information_model(std::string_view text) {
  for (const auto& line : text::lines(text)) {
    const auto trimmed = text::trim(line);
    if (!text::starts_with(trimmed, "Model:")) continue;
    return std::string(text::trim(trimmed.substr(6)));
  }
  return {};
}

std::vector<std::string> kernel_gpu_models(const Sysroot& sysroot) {
  const std::string base = "/proc/driver/nvidia/gpus";
  auto buses = sysroot.list_directory(base);
  std::sort(buses.begin(), buses.end());
  if (buses.size() > gpu_limit) buses.resize(gpu_limit);
  std::vector<std::string> models;
  for (const auto& bus : buses) {
    const auto text = sysroot.read_bounded(base + "/" + bus + "/information", kernel_file_limit);
    if (!text) continue;
    auto model = parse_gpu_information_model(*text);
    if (!model.empty()) models.push_back(text::printable(model, 64));
  }
  return models;
}

}  // namespace cudaenv::probe
