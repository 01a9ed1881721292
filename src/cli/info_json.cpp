#include "cli/info_json.hpp"

#include "probe/wsl.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;

json optional_version(const std::optional<Version>& version) {
  return version ? json(version->str()) : json(nullptr);
}

json versions_json(const std::vector<Version>& versions) {
  json list = json::array();
  for (const auto& version : versions) list.push_back(version.str());
  return list;
}

json driver_json(const std::optional<probe::DriverFacts>& driver) {
  if (!driver) return nullptr;
  return {{"version", driver->version},
          {"cuda_version", optional_version(driver->cuda_version)},
          {"source", probe::to_string(driver->version_source)},
          {"library", driver->library.empty() ? json(nullptr) : json(driver->library)},
          {"open_kernel_module", driver->open_kernel_module},
          {"loaded", driver->loaded}};
}

json gpus_json(const std::vector<probe::GpuFacts>& gpus) {
  json list = json::array();
  for (const auto& gpu : gpus) {
    list.push_back({{"index", gpu.index},
                    {"name", gpu.name},
                    {"compute_capability", gpu.compute_capability.str()},
                    {"sm", "sm_" + std::to_string(gpu.compute_capability.major()) +
                               std::to_string(gpu.compute_capability.minor())},
                    {"memory_bytes", gpu.memory_bytes}});
  }
  return list;
}

json modules_json(const probe::KernelModuleFacts& modules) {
  return {{"readable", modules.modules_readable}, {"nvidia", modules.nvidia},
          {"nvidia_uvm", modules.nvidia_uvm},     {"nvidia_modeset", modules.nvidia_modeset},
          {"nvidia_drm", modules.nvidia_drm},     {"nouveau", modules.nouveau},
          {"device_nodes", modules.device_nodes}};
}

json toolkits_json(const std::vector<probe::ToolkitFacts>& toolkits) {
  json list = json::array();
  for (const auto& toolkit : toolkits) {
    json origins = json::array();
    for (size_t i = 0; i < toolkit.origins.size(); ++i) {
      origins.push_back(
          {{"kind", probe::to_string(toolkit.origins[i])}, {"path", toolkit.found_at[i]}});
    }
    list.push_back(
        {{"path", toolkit.path},
         {"version", optional_version(toolkit.version)},
         {"release", toolkit.version ? json(toolkit.version->major_minor().str()) : json(nullptr)},
         {"nvcc_version", optional_version(toolkit.nvcc_version)},
         {"cudart_version", optional_version(toolkit.cudart_version)},
         {"release_known", toolkit.release_known},
         {"candidate_releases", versions_json(toolkit.candidate_releases)},
         {"name", resolve::toolkit_name(toolkit)},
         {"version_source", toolkit.version_source},
         {"from_wheels", toolkit.from_wheels},
         {"origins", origins}});
  }
  return list;
}

json default_link_json(const std::optional<probe::DefaultLinkFacts>& link) {
  if (!link) return nullptr;
  return {{"path", link->path},
          {"chain", link->chain},
          {"target", link->target},
          {"dangling", link->dangling}};
}

json compilers_json(const std::vector<probe::CompilerFacts>& compilers) {
  json list = json::array();
  for (const auto& compiler : compilers) {
    list.push_back({{"name", compiler.name},
                    {"family", compiler.family},
                    {"path", compiler.path},
                    {"version", optional_version(compiler.version)}});
  }
  return list;
}

json os_json(const probe::OsFacts& os) {
  const auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"id", or_null(os.id)},
          {"id_like", or_null(os.id_like)},
          {"version_id", or_null(os.version_id)},
          {"codename", or_null(os.codename)},
          {"pretty_name", or_null(os.pretty_name)},
          {"kernel", or_null(os.kernel)},
          {"architecture", or_null(os.architecture)}};
}

// null off WSL2, so a consumer tests one key for "is the driver the Windows one".
json wsl_json(const probe::WslFacts& wsl) {
  if (!wsl.wsl2) return nullptr;
  return {
      {"evidence", wsl.evidence},
      {"driver_directory", wsl.driver_store ? json(probe::wsl_driver_directory) : json(nullptr)},
      {"dxg_device", wsl.dxg_device},
      {"linux_driver_libraries", wsl.linux_driver_libraries}};
}

json env_json(const probe::CudaEnvFacts& env) {
  json variables = json::object();
  for (const auto& variable : env.variables) variables[variable.name] = variable.value;
  return {{"variables", variables}, {"cuda_library_paths", env.cuda_library_paths}};
}

}  // namespace

nlohmann::ordered_json info_to_json(const probe::MachineFacts& facts) {
  return {{"schema_version", 1},
          {"driver", driver_json(facts.driver)},
          {"gpus", gpus_json(facts.gpus)},
          {"modules", modules_json(facts.modules)},
          {"toolkits", toolkits_json(facts.toolkits)},
          {"default_link", default_link_json(facts.default_link)},
          {"compilers", compilers_json(facts.compilers)},
          {"os", os_json(facts.os)},
          {"wsl2", wsl_json(facts.wsl)},
          {"env", env_json(facts.env)},
          {"notes", facts.notes}};
}

}  // namespace cudaenv::cli
