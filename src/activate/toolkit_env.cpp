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

// A PATH entry that is another CUDA toolkit's bin/: its nvcc beside it, the toolkit's
// version.json (version.txt before 11.1) above it. Never a directory shared with other programs:
// /usr/bin, /usr/local/bin, or a conda environment's bin/ (conda-meta/ beside it), which holds
// its Python too.
bool other_toolkit_bin(const std::string& entry, const std::string& prefix) {
  const std::filesystem::path bin(text::without_trailing_slashes(entry));
  if (bin.filename() != "bin" || bin.parent_path() == prefix) return false;
  const auto parent = bin.parent_path();
  if (parent == "/" || parent == "/usr" || parent == "/usr/local") return false;
  std::error_code ec;
  if (std::filesystem::exists(parent / "conda-meta", ec)) return false;
  return has_compiler(parent) && (std::filesystem::exists(parent / "version.json", ec) ||
                                  std::filesystem::exists(parent / "version.txt", ec));
}

}  // namespace

bool has_compiler(const std::filesystem::path& prefix) {
  std::error_code ec;
  const auto status = std::filesystem::status(prefix / "bin" / "nvcc", ec);
  return !ec && std::filesystem::is_regular_file(status);
}

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
  if (!toolkit.forward_compat_lib.empty())
    library_path = prepend_entry(library_path, toolkit.forward_compat_lib, previous_lib);
  const auto path = current.get("PATH").value_or("");
  if (!toolkit.has_compiler) {
    for (const auto& entry : text::split(path, ':'))
      if (other_toolkit_bin(entry, prefix)) previous_bin.push_back(entry);
  }
  std::map<std::string, std::string> variables{
      {"CUDA_HOME", prefix},
      {"CUDA_PATH", prefix},
      {"CUDAToolkit_ROOT", prefix},
      {"CUDAENV_ACTIVE", toolkit.version},
      {"PATH", prepend_entry(path, prefix + "/bin", previous_bin)},
      {"LD_LIBRARY_PATH", library_path},
  };
  if (toolkit.has_compiler) variables["CUDACXX"] = prefix + "/bin/nvcc";
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
