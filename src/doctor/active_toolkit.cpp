#include "doctor/active_toolkit.hpp"

#include <algorithm>

namespace cudaenv::doctor {

namespace {

std::optional<std::string> variable(const probe::MachineFacts& facts, const std::string& name) {
  for (const auto& v : facts.env.variables) {
    if (v.name == name && !v.value.empty()) return v.value;
  }
  return std::nullopt;
}

bool reached_by(const probe::ToolkitFacts& toolkit, probe::ToolkitOrigin origin) {
  return std::find(toolkit.origins.begin(), toolkit.origins.end(), origin) != toolkit.origins.end();
}

std::optional<probe::ToolkitFacts> by_origin(const probe::MachineFacts& facts,
                                             probe::ToolkitOrigin origin) {
  for (const auto& toolkit : facts.toolkits) {
    if (reached_by(toolkit, origin)) return toolkit;
  }
  return std::nullopt;
}

// The selected spec names a version among cudaenv's own toolkits; the highest match wins.
bool select_by_spec(const probe::MachineFacts& facts, const std::optional<VersionSpec>& selected,
                    const std::string& selected_by, ActiveToolkit& active) {
  std::optional<std::string> value;
  std::optional<VersionSpec> spec = selected;
  if (selected) {
    value = selected->str();
  } else {
    value = variable(facts, "CUDAENV_VERSION");
    if (!value || *value == "system") return false;
    if (auto parsed = VersionSpec::parse(*value)) spec = *parsed;
  }
  const probe::ToolkitFacts* best = nullptr;
  for (const auto& toolkit : facts.toolkits) {
    if (!spec || !toolkit.version || !reached_by(toolkit, probe::ToolkitOrigin::cudaenv)) continue;
    if (spec->matches(*toolkit.version) && (best == nullptr || *toolkit.version > *best->version))
      best = &toolkit;
  }
  if (best == nullptr) {
    active.notes.push_back(
        selected_by + "=" + *value +
        " matches no toolkit installed by cudaenv; the system's toolkit is used");
    return false;
  }
  active.toolkit = *best;
  active.selected_by = selected_by + "=" + *value;
  return true;
}

}  // namespace

ActiveToolkit select_active_toolkit(const probe::MachineFacts& facts,
                                    const std::optional<VersionSpec>& selected,
                                    const std::string& selected_by) {
  ActiveToolkit active;
  if (select_by_spec(facts, selected, selected_by, active)) return active;
  const std::pair<probe::ToolkitOrigin, const char*> system_order[] = {
      {probe::ToolkitOrigin::path_nvcc, "nvcc on PATH"},
      {probe::ToolkitOrigin::distro_package, "nvidia-cuda-toolkit (apt)"},
      {probe::ToolkitOrigin::cuda_home, "CUDA_HOME"},
      {probe::ToolkitOrigin::default_link, "/usr/local/cuda"},
  };
  for (const auto& [origin, label] : system_order) {
    if (auto toolkit = by_origin(facts, origin)) {
      active.toolkit = std::move(toolkit);
      active.selected_by = label;
      return active;
    }
  }
  return active;
}

}  // namespace cudaenv::doctor
