#pragma once
// Writing modulefiles into a modules directory (DIR/cuda/…, DIR/cudnn/…): each file replaced in
// one rename, and the files an earlier run wrote for toolkits no longer installed removed.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "modules/modulefile.hpp"

namespace cudaenv::modules {

struct WriteReport {
  std::vector<std::string> written;  // relative paths
  std::vector<std::string> removed;
};

// A file of the same name that cudaenv did not write (no generated_marker on its first lines) is
// never replaced: ErrorKind::usage naming it, before anything is written.
Result<WriteReport> write_modulefiles(const std::filesystem::path& dir,
                                      const std::vector<ModuleFile>& files);

}  // namespace cudaenv::modules
