#pragma once
// The facts a set of modulefiles is written from: the toolkits and cuDNN builds of the stores
// (the user's first: it wins on equal versions) and the database's floors, architectures and
// host compiler limits for each.

#include <string>
#include <vector>

#include "core/environment.hpp"
#include "install/store.hpp"
#include "manifest/database.hpp"
#include "modules/modulefile.hpp"

namespace cudaenv::modules {

struct LabelledStore {
  install::Store store;
  std::string label;  // "user store /home/a/.local/share/cudaenv", "system store /opt/cudaenv"
};

// `env` is the environment of the one writing the files: its PATH is where the host compiler a
// toolkit needs is looked for, as activation looks for it (activate::choose_host_compiler).
ModuleSet collect(const std::vector<LabelledStore>& stores, const manifest::Database& db,
                  const Environment& env);

// One toolkit's facts from the database, its directory and the host compilers on env's PATH.
ToolkitModule toolkit_module(const install::Installed& toolkit, const std::string& store_label,
                             const manifest::Database& db, const Environment& env);

}  // namespace cudaenv::modules
