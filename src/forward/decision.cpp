#include "forward/decision.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "core/version.hpp"

namespace cudaenv::forward {

namespace {

std::string branch_list(const std::vector<int>& branches) {
  std::vector<std::string> names;
  names.reserve(branches.size());
  for (const int branch : branches) names.push_back(std::to_string(branch));
  return text::join(names, ", ");
}

}  // namespace

std::string error_803() {
  return "error 803 (cudaErrorSystemDriverMismatch: \"system has unsupported display driver / "
         "cuda driver combination\")";
}

std::string error_804() {
  return "error 804 (cudaErrorCompatNotSupportedOnDevice: \"forward compatibility was attempted "
         "on non supported HW\")";
}

Decision decide(const CompatLibrary& library, const std::optional<std::string>& module_version,
                const std::vector<std::string>& gpus,
                const std::function<bool(const std::string&)>& gpu_supported) {
  const auto lib = "the forward-compatibility library " + library.version;
  if (!library.note)
    return {Verdict::unreadable,
            lib + " has no readable note (" + library.note_problem + "): it is never put first"};
  const auto module = module_version ? Version::parse(*module_version) : std::nullopt;
  if (!module) return {Verdict::no_module, "no NVIDIA kernel module is loaded"};
  const auto ours = Version::parse(library.version);
  if (!ours || *module >= *ours)
    return {Verdict::module_not_older,
            "the loaded kernel module " + *module_version + " is not older than " + lib +
                ": the system's driver serves, and putting the library first would fail with " +
                error_803()};
  const auto& branches = library.note->driver_branches;
  if (std::find(branches.begin(), branches.end(), module->major()) == branches.end())
    return {Verdict::branch_not_supported, lib + " runs on kernel modules of branches " +
                                               branch_list(branches) +
                                               " (its own note); this one is " + *module_version +
                                               ": it would fail with " + error_803()};
  for (const auto& gpu : gpus) {
    if (!gpu_supported(gpu))
      return {Verdict::gpu_not_supported,
              "GPU " + text::printable(gpu) +
                  " is not a data-center GPU forward compatibility runs on: " + lib +
                  " would fail with " + error_804()};
  }
  return {Verdict::use, lib + " (CUDA " + library.note->cuda.str() + ") runs on the loaded " +
                            *module_version + " module (branch " + std::to_string(module->major()) +
                            " is in its note)"};
}

}  // namespace cudaenv::forward
