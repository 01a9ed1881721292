#include "lock/target_env.hpp"

#include "core/text.hpp"
#include "lock/lock_file.hpp"
#include "project/project_file.hpp"

namespace cudaenv::lock {

namespace {

std::vector<std::string> arch_names(const project::DeclaredTarget& target) {
  std::vector<std::string> out;
  for (const auto& arch : target.archs) out.push_back(arch.str());
  return out;
}

TargetSettings declared_settings(const project::DeclaredTarget& target,
                                 const std::filesystem::path& file) {
  std::vector<std::string> digits;
  for (const auto& arch : target.archs) digits.push_back(project::arch_digits(arch));
  return {target.name,
          target.driver.str(),
          "",
          file.string(),
          {{"CUDAENV_TARGET", target.name},
           {"TORCH_CUDA_ARCH_LIST", text::join(arch_names(target), ";")},
           {"CMAKE_CUDA_ARCHITECTURES", text::join(digits, ";")}}};
}

}  // namespace

Result<TargetSettings> target_settings(const std::filesystem::path& project_file,
                                       std::string_view name) {
  auto project = project::read_project_file(project_file);
  if (!project) return project.error();
  const auto* target = project::find_target(project->targets, name);
  const auto shown = text::printable(project_file.string(), text::message_limit);
  if (target == nullptr) {
    std::vector<std::string> names;
    for (const auto& declared : project->targets) names.push_back(declared.name);
    return make_error(
        ErrorKind::not_found,
        "--target: " + shown + " declares no target \"" + text::printable(name) + "\"",
        names.empty() ? "declare one: [targets.a100] with driver = \"535.104.05\" "
                        "and arch = [\"8.0\"]"
                      : "its targets: " + text::join(names, ", "));
  }
  const auto lock_path = lock_path_for(project_file);
  auto lock = read_lock_file(lock_path);
  if (!lock && lock.error().kind == ErrorKind::not_found)
    return declared_settings(*target, project_file);  // no lock yet: the declaration alone
  if (!lock)  // unreadable, not TOML, or holding a value that fails its grammar: never guessed at
    return make_error(lock.error().kind, "--target: " + lock.error().message,
                      "fix or remove " + text::printable(lock_path.string(), text::message_limit) +
                          " (cudaenv lock writes it again)");
  const auto it = lock->targets.find(target->name);
  if (it == lock->targets.end() || it->second.archs != arch_names(*target) ||
      it->second.driver != target->driver.str())
    return declared_settings(*target, project_file);  // the lock is stale for it
  const auto& locked = it->second;
  TargetSettings out{target->name, locked.driver, locked.mode, lock_path.string(), {}};
  out.variables = {{"CUDAENV_TARGET", target->name},
                   {"TORCH_CUDA_ARCH_LIST", locked.torch_cuda_arch_list},
                   {"CMAKE_CUDA_ARCHITECTURES", locked.cmake_cuda_architectures}};
  if (!locked.cudahostcxx.empty()) out.variables.emplace_back("CUDAHOSTCXX", locked.cudahostcxx);
  return out;
}

}  // namespace cudaenv::lock
