#include "modules/collect.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include "activate/host_compiler.hpp"
#include "activate/toolkit_env.hpp"

namespace cudaenv::modules {

namespace fs = std::filesystem;

namespace {

std::string archs_for(const Version& version, const manifest::Database& db) {
  const auto series = version.major_minor();
  std::string archs;
  for (const auto& arch : db.gpu_archs) {
    if (series < arch.first_cuda) continue;
    if (arch.last_cuda && arch.last_cuda->major_minor() < series) continue;
    if (!archs.empty()) archs += ' ';
    archs += arch.sm;
  }
  return archs;
}

bool is_dir(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The compiler activation would hand nvcc for `toolkit` here, chosen by the same rules but
// without the writer's own CUDAHOSTCXX, NVCC_CCBIN and NVCC_PREPEND_FLAGS: the files are for
// every user. Only one that nvcc's flag variable and a modulefile can both carry.
std::optional<std::string> module_host_compiler(const install::Installed& toolkit,
                                                const Environment& env) {
  Environment site = env;
  for (const char* own : {"CUDAHOSTCXX", "NVCC_CCBIN", "NVCC_PREPEND_FLAGS"}) site.unset(own);
  const auto choice =
      activate::choose_host_compiler(site, toolkit.path.string(), {}, toolkit.version.str());
  if (!activate::host_compiler_variables(site, choice).contains("NVCC_PREPEND_FLAGS"))
    return std::nullopt;
  if (!check_quotable(*choice.compiler)) return std::nullopt;
  return choice.compiler;
}

}  // namespace

ToolkitModule toolkit_module(const install::Installed& toolkit, const std::string& store_label,
                             const manifest::Database& db, const Environment& env) {
  ToolkitModule module;
  module.version = toolkit.version.str();
  module.prefix = toolkit.path.string();
  module.store = store_label;
  for (const auto& release : db.cuda_releases) {
    if (release.version == toolkit.version && release.min_driver)
      module.full_floor = release.min_driver->str();
  }
  if (const auto* family = db.family(toolkit.version.major()))
    module.minor_floor = family->minor_compat_floor.str();
  module.archs = archs_for(toolkit.version, db);
  if (const auto* limit = db.host_compiler(toolkit.version); limit && limit->gcc_max > 0)
    module.gcc_max = limit->gcc_max;
  module.has_stubs = is_dir(toolkit.path / "lib64" / "stubs");
  module.has_include = is_dir(toolkit.path / "include");
  module.has_man = is_dir(toolkit.path / "share" / "man");
  module.has_nvcc = activate::has_compiler(toolkit.path);
  if (module.has_nvcc) module.host_compiler = module_host_compiler(toolkit, env);
  return module;
}

ModuleSet collect(const std::vector<LabelledStore>& stores, const manifest::Database& db,
                  const Environment& env) {
  ModuleSet set;
  std::set<std::string> toolkit_seen;
  std::set<std::string> cudnn_seen;
  for (const auto& [store, label] : stores) {
    for (const auto& toolkit : install::installed_toolkits(store, install::Receipts::skip)) {
      if (toolkit_seen.insert(toolkit.version.str()).second)
        set.toolkits.push_back(toolkit_module(toolkit, label, db, env));
    }
    for (const auto& cudnn : install::installed_cudnn(store, install::Receipts::skip)) {
      const auto name = cudnn.path.filename().string();
      const auto dash = name.find("-cuda");
      int major = 0;
      std::from_chars(name.data() + dash + 5, name.data() + name.size(), major);
      if (major > 0 && cudnn_seen.insert(name).second)
        set.cudnn.push_back({cudnn.version.str(), major, cudnn.path.string()});
    }
  }
  const auto newest_first = [](const auto& a, const auto& b) {
    return *Version::parse(a.version) > *Version::parse(b.version);
  };
  std::stable_sort(set.toolkits.begin(), set.toolkits.end(), newest_first);
  std::stable_sort(set.cudnn.begin(), set.cudnn.end(), newest_first);
  return set;
}

}  // namespace cudaenv::modules
