#include <algorithm>

#include "modules/render.hpp"

namespace cudaenv::modules {

std::string describe_floor(const ToolkitModule& toolkit) {
  if (!toolkit.full_floor && !toolkit.minor_floor) return "unknown (not in the database)";
  std::string text;
  if (toolkit.full_floor) text = ">= " + *toolkit.full_floor + " (full support)";
  if (toolkit.minor_floor) {
    if (!text.empty()) text += ", ";
    text += ">= " + *toolkit.minor_floor + " (minor-version compatibility)";
  }
  return text;
}

std::vector<std::string> whatis_lines(const ToolkitModule& toolkit) {
  return {"Name: CUDA Toolkit",
          "Version: " + toolkit.version,
          "Driver: " + describe_floor(toolkit),
          "GPU architectures: " + (toolkit.archs.empty() ? std::string("unknown") : toolkit.archs),
          "Host compiler: " + (toolkit.gcc_max ? "gcc <= " + std::to_string(*toolkit.gcc_max)
                                               : std::string("unknown")),
          "Store: " + toolkit.store,
          toolkit.has_nvcc ? "Compiler: nvcc"
                           : "Compiler: none (runtime-only, from a package index: no nvcc)"};
}

std::vector<std::pair<std::string, std::string>> fallbacks(const ModuleSet& set) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& toolkit : set.toolkits) {
    if (auto floor = toolkit.lowest_driver()) found.emplace_back(toolkit.version, *floor);
  }
  return found;
}

std::vector<std::string> cuda_modules_of_major(const ModuleSet& set, int major) {
  std::vector<std::string> names;
  const auto prefix = std::to_string(major) + ".";
  for (const auto& toolkit : set.toolkits) {
    if (toolkit.version.rfind(prefix, 0) == 0) names.push_back("cuda/" + toolkit.version);
  }
  return names;
}

}  // namespace cudaenv::modules
