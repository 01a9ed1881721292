#include "probe/executables.hpp"

#include "core/text.hpp"

namespace cudaenv::probe {

std::string runnable(const Sysroot& sysroot, const std::string& machine_path) {
  return sysroot.host_path(sysroot.canonical(machine_path).value_or(machine_path)).string();
}

std::optional<std::string> find_tool(const Sysroot& sysroot, const Environment& env,
                                     const std::string& name,
                                     const std::vector<std::string>& fallbacks) {
  auto directories = text::split(env.get("PATH").value_or(""), ':');
  directories.insert(directories.end(), fallbacks.begin(), fallbacks.end());
  for (const auto& directory : directories) {
    if (directory.empty() || directory.front() != '/') continue;  // relative entries: not ours
    const auto path = directory + "/" + name;
    if (sysroot.is_executable_file(path)) return path;
  }
  return std::nullopt;
}

}  // namespace cudaenv::probe
