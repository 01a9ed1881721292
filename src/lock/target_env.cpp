#include "lock/target_env.hpp"

#include <algorithm>

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

// Whether every one of `wanted` is in `have`.
bool covers(const std::vector<std::string>& have, const std::vector<std::string>& wanted) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& arch) {
    return std::find(have.begin(), have.end(), arch) != have.end();
  });
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
  const auto shown = text::printable(project_file.string(), text::message_limit);
  auto found = project::require_target(project->targets, name, shown);
  if (!found) return found.error();
  const auto* target = *found;
  const auto lock_path = lock_path_for(project_file);
  auto lock = read_lock_file(lock_path);
  // A target that names GPU models has its architectures from the database, which this light
  // reader does not load: the lock records them.
  const auto gpus_unlocked = [&] {
    return make_error(ErrorKind::usage,
                      "--target: targets." + text::printable(target->name) + " in " + shown +
                          " names GPU models (gpu = ...), whose architectures "
                          "cudaenv lock records in " +
                          text::printable(lock_path.string(), text::message_limit),
                      "run cudaenv lock (and commit .cudaenv.lock), or declare the architectures: "
                      "arch = [\"9.0\"]");
  };
  if (!lock && lock.error().kind == ErrorKind::not_found) {
    if (!target->gpus.empty()) return gpus_unlocked();
    return declared_settings(*target, project_file);  // no lock yet: the declaration alone
  }
  if (!lock)  // unreadable, not TOML, or holding a value that fails its grammar: never guessed at
    return make_error(lock.error().kind, "--target: " + lock.error().message,
                      "fix or remove " + text::printable(lock_path.string(), text::message_limit) +
                          " (cudaenv lock writes it again)");
  const auto it = lock->targets.find(target->name);
  const bool current = it != lock->targets.end() && it->second.driver == target->driver.str() &&
                       it->second.gpus == target->gpus &&
                       (target->gpus.empty() ? it->second.archs == arch_names(*target)
                                             : covers(it->second.archs, arch_names(*target)));
  if (!current) {  // the lock is stale for it
    if (!target->gpus.empty()) return gpus_unlocked();
    return declared_settings(*target, project_file);
  }
  const auto& locked = it->second;
  TargetSettings out{target->name, locked.driver, locked.mode, lock_path.string(), {}};
  out.variables = {{"CUDAENV_TARGET", target->name},
                   {"TORCH_CUDA_ARCH_LIST", locked.torch_cuda_arch_list},
                   {"CMAKE_CUDA_ARCHITECTURES", locked.cmake_cuda_architectures}};
  if (!locked.cudahostcxx.empty()) out.variables.emplace_back("CUDAHOSTCXX", locked.cudahostcxx);
  return out;
}

}  // namespace cudaenv::lock
