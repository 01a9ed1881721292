#pragma once
// The facts a set of modulefiles is written from: the toolkits and cuDNN builds of the stores
// (the user's first: it wins on equal versions) and the database's floors, architectures and
// host compiler limits for each.

#include <string>
#include <vector>

#include "install/store.hpp"
#include "manifest/database.hpp"
#include "modules/modulefile.hpp"

namespace cudaenv::modules {

struct LabelledStore {
  install::Store store;
  std::string label;  // "user store /home/a/.local/share/cudaenv", "system store /opt/cudaenv"
};

ModuleSet collect(const std::vector<LabelledStore>& stores, const manifest::Database& db);

// One toolkit's facts from the database and its directory.
ToolkitModule toolkit_module(const install::Installed& toolkit, const std::string& store_label,
                             const manifest::Database& db);

}  // namespace cudaenv::modules
