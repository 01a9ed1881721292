#include "scan/package_library.hpp"

#include <algorithm>
#include <filesystem>

#include "scan/elf.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace {

namespace fs = std::filesystem;

constexpr int max_depth = 8;
constexpr size_t max_entries = 20000;

bool looks_like_library(const std::string& name) {
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

bool needs(const fs::path& file, const std::string& library) {
  auto mapped = MappedFile::open(file);
  if (!mapped || !is_elf(mapped->bytes())) return false;
  auto info = parse_elf(mapped->bytes());
  if (!info) return false;
  return std::find(info->needed.begin(), info->needed.end(), library) != info->needed.end();
}

}  // namespace

std::optional<std::string> package_library_needing(const std::vector<std::string>& site_packages,
                                                   const std::string& package,
                                                   const std::string& library) {
  std::string directory = package;
  std::replace(directory.begin(), directory.end(), '-', '_');
  std::optional<std::string> best;
  for (const auto& site : site_packages) {
    const auto root = fs::path(site) / directory;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    size_t seen = 0;
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end && ++seen <= max_entries; it.increment(ec)) {
      if (it.depth() >= max_depth) it.disable_recursion_pending();
      const auto name = it->path().filename().string();
      if (!it->is_regular_file(ec) || it->is_symlink(ec) || !looks_like_library(name)) continue;
      const auto path = it->path().string();
      if (best && path.size() >= best->size()) continue;
      if (needs(it->path(), library)) best = path;
    }
    if (best) return best;
  }
  return best;
}

}  // namespace cudaenv::scan
