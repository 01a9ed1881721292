#include "activate/toolkit_env.hpp"

#include <algorithm>

#include "activate/host_compiler.hpp"
#include "core/text.hpp"

namespace cudaenv::activate {

namespace {

bool is_one_of(const std::string& entry, const std::vector<std::string>& paths) {
  const auto normal = text::without_trailing_slashes(entry);
  return std::any_of(paths.begin(), paths.end(), [&](const std::string& path) {
    return text::without_trailing_slashes(path) == normal;
  });
}

}  // namespace

std::string prepend_entry(std::string_view list, const std::string& entry,
                          const std::vector<std::string>& remove) {
  if (list.empty()) return entry;
  std::vector<std::string> kept{entry};
  std::vector<std::string> drop = remove;
  drop.push_back(entry);
  for (auto& existing : text::split(list, ':')) {
    if (!existing.empty() && is_one_of(existing, drop)) continue;
    kept.push_back(std::move(existing));
  }
  return text::join(kept, ":");
}

std::map<std::string, std::string> toolkit_variables(const Environment& current,
                                                     const ToolkitPrefix& toolkit) {
  return toolkit_variables(
      current, toolkit,
      choose_host_compiler(current, toolkit.path, toolkit.host_compiler, toolkit.version));
}

std::map<std::string, std::string> toolkit_variables(const Environment& current,
                                                     const ToolkitPrefix& toolkit,
                                                     const HostCompilerChoice& host) {
  const std::string& prefix = toolkit.path;
  // A toolkit cudaenv activated earlier is recognised by CUDAENV_ACTIVE; its directories go.
  std::vector<std::string> previous_bin, previous_lib;
  if (current.get_nonempty("CUDAENV_ACTIVE")) {
    if (auto home = current.get_nonempty("CUDA_HOME")) {
      previous_bin.push_back(*home + "/bin");
      previous_lib.push_back(*home + "/lib64");
    }
  }
  // cuDNN's directory goes in first so that lib64, prepended after it, ends up ahead of it.
  auto library_path = current.get("LD_LIBRARY_PATH").value_or("");
  if (!toolkit.cudnn_lib.empty())
    library_path = prepend_entry(library_path, toolkit.cudnn_lib, previous_lib);
  library_path = prepend_entry(library_path, prefix + "/lib64", previous_lib);
  std::map<std::string, std::string> variables{
      {"CUDA_HOME", prefix},
      {"CUDA_PATH", prefix},
      {"CUDAToolkit_ROOT", prefix},
      {"CUDACXX", prefix + "/bin/nvcc"},
      {"CUDAENV_ACTIVE", toolkit.version},
      {"PATH", prepend_entry(current.get("PATH").value_or(""), prefix + "/bin", previous_bin)},
      {"LD_LIBRARY_PATH", library_path},
  };
  for (auto& [name, value] : host_compiler_variables(current, host)) variables[name] = value;
  return variables;
}

Environment toolkit_environment(const Environment& current, const ToolkitPrefix& toolkit) {
  return toolkit_environment(
      current, toolkit,
      choose_host_compiler(current, toolkit.path, toolkit.host_compiler, toolkit.version));
}

Environment toolkit_environment(const Environment& current, const ToolkitPrefix& toolkit,
                                const HostCompilerChoice& host) {
  Environment result = current;
  for (auto& [name, value] : toolkit_variables(current, toolkit, host)) result.set(name, value);
  return result;
}

}  // namespace cudaenv::activate
