#include "project/stores.hpp"

#include <algorithm>

#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "project/config.hpp"

namespace cudaenv::project {

namespace fs = std::filesystem;

fs::path system_config_file(const Environment& env) {
  if (auto file = env.get_nonempty("CUDAENV_SYSTEM_CONFIG"); file && file->front() == '/')
    return *file;
  return "/etc/cudaenv/config.toml";
}

Result<std::vector<fs::path>> system_roots(const Environment& env) {
  std::vector<std::string> named;
  std::string source = "CUDAENV_SYSTEM_ROOTS";
  if (auto listed = env.get_nonempty("CUDAENV_SYSTEM_ROOTS")) {
    named = text::split(*listed, ':');
  } else {
    source = "system_roots in " + system_config_file(env).string();
    auto config = load_config(system_config_file(env));
    if (!config) return config.error();
    named = config->system_roots;
  }
  std::error_code ec;
  const auto own = fs::weakly_canonical(paths::data_root(env), ec);
  std::vector<fs::path> roots;
  for (const auto& entry : named) {
    if (entry.empty()) continue;
    // A relative store would be whatever directory cudaenv runs in: refused, never skipped
    // silently, so the commands that report say why the system stores are missing.
    if (entry.front() != '/')
      return make_error(ErrorKind::usage,
                        source + " names a relative path (" + text::printable(entry) +
                            "): the store would be whatever directory cudaenv runs in",
                        "name each system store by its absolute path");
    if (fs::weakly_canonical(entry, ec) == own) continue;
    roots.emplace_back(entry);
  }
  return roots;
}

install::Store store_for(const Environment& env) {
  install::Store store{paths::data_root(env)};
  auto roots = system_roots(env);
  if (!roots) return store;
  for (const auto& root : *roots) {
    // Its toolkits run and its cuDNN libraries are loaded: the same check as the user's own root
    // (toolkits/, cudnn/), which probe applies to the system stores too.
    if (ownership::check_data_root(root)) store.shared_roots.push_back(root);
  }
  return store;
}

}  // namespace cudaenv::project
