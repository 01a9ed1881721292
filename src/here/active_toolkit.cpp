#include "here/active_toolkit.hpp"

#include <algorithm>
#include <filesystem>

namespace cudaenv::here {

namespace fs = std::filesystem;

namespace {

bool reached_by(const probe::ToolkitFacts& toolkit, probe::ToolkitOrigin origin) {
  return std::find(toolkit.origins.begin(), toolkit.origins.end(), origin) != toolkit.origins.end();
}

std::string comparable(const std::string& path) {
  std::error_code ec;
  auto canonical = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : canonical.string();
}

// The probed facts of the toolkit that serves the selection, matched by path: a store's prefix
// as this process reaches it, a system prefix by its machine path.
std::optional<probe::ToolkitFacts> facts_of(const ServingToolkit& serving,
                                            const std::vector<probe::ToolkitFacts>& toolkits) {
  const auto wanted = serving.place == ToolkitPlace::system_prefix
                          ? serving.machine_path
                          : comparable(serving.installed.path.string());
  for (const auto& toolkit : toolkits) {
    const bool in_store = reached_by(toolkit, probe::ToolkitOrigin::cudaenv);
    const auto path = in_store ? comparable(toolkit.path) : toolkit.path;
    if (path == wanted || std::find(toolkit.found_at.begin(), toolkit.found_at.end(), wanted) !=
                              toolkit.found_at.end())
      return toolkit;
  }
  return std::nullopt;
}

probe::ToolkitFacts described(const ServingToolkit& serving) {
  probe::ToolkitFacts facts;
  facts.path = serving.place == ToolkitPlace::system_prefix ? serving.machine_path
                                                            : serving.installed.path.string();
  facts.version = serving.installed.version;
  facts.release_known = true;
  facts.origins = {serving.place == ToolkitPlace::system_prefix
                       ? probe::ToolkitOrigin::versioned_dir
                       : probe::ToolkitOrigin::cudaenv};
  return facts;
}

void system_fallback(const std::vector<probe::ToolkitFacts>& toolkits, ActiveToolkit& active) {
  for (const auto& [origin, label] : system_order()) {
    for (const auto& toolkit : toolkits) {
      if (!reached_by(toolkit, origin)) continue;
      active.toolkit = toolkit;
      active.selected_by = label;
      active.origin = probe::to_string(origin);
      return;
    }
  }
}

}  // namespace

const std::vector<SystemOrigin>& system_order() {
  static const std::vector<SystemOrigin> order = {
      {probe::ToolkitOrigin::path_nvcc, "nvcc on PATH"},
      {probe::ToolkitOrigin::cuda_home, "CUDA_HOME"},
      {probe::ToolkitOrigin::distro_package, "nvidia-cuda-toolkit (apt)"},
      {probe::ToolkitOrigin::default_link, "/usr/local/cuda"},
  };
  return order;
}

ActiveToolkit active_toolkit(const Here& here, const std::vector<probe::ToolkitFacts>& toolkits) {
  ActiveToolkit active;
  // A pinned cuDNN that is missing leaves the environment the system's too: activation refuses
  // the half of a selection.
  if (here.toolkit && !here.missing) {
    active.toolkit = facts_of(*here.toolkit, toolkits).value_or(described(*here.toolkit));
    active.selected_by =
        project::describe_source(here.selection) + "=" + here.selection.cuda->str();
    active.origin = "selection";
    active.selected = true;
    active.forward_compat = here.forward_compat;
    return active;
  }
  if (here.missing) {
    // What applies here is missing, as every command says: no toolkit stands in for it. What the
    // builds get meanwhile is a note.
    active.missing = here.missing;
    active.selected_by =
        project::describe_source(here.selection) + "=" + here.selection.cuda->str();
    active.origin = "selection";
    ActiveToolkit meanwhile;
    system_fallback(toolkits, meanwhile);
    active.notes.push_back(here.missing->message + "; until it is, builds here get " +
                           (meanwhile.toolkit ? "the system's toolkit " + meanwhile.toolkit->path +
                                                    " (" + meanwhile.selected_by + ")"
                                              : std::string("no toolkit")));
    return active;
  }
  system_fallback(toolkits, active);
  return active;
}

}  // namespace cudaenv::here
