#include "scan/copies.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "core/files.hpp"
#include "core/text.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

namespace {

// "libcudnn.so.9.10.2" → "9.10.2"; "" without a number after ".so.".
std::string version_in_name(const std::string& name) {
  const auto at = name.find(".so.");
  return at == std::string::npos ? "" : name.substr(at + 4);
}

bool is_site_packages(const fs::path& directory) {
  const auto name = directory.filename().string();
  return name == "site-packages" || name == "dist-packages";
}

// The dist-info directory whose RECORD lists `relative` ("nvidia/cu13/lib/libcudart.so.13").
std::string wheel_version(const fs::path& site, const std::string& relative, std::string& wheel) {
  std::error_code error;
  for (fs::directory_iterator it(site, error), end; !error && it != end; it.increment(error)) {
    const auto name = it->path().filename().string();
    if (!text::ends_with(name, ".dist-info") || !text::starts_with(name, "nvidia")) continue;
    const auto record = read_small_file_or_empty(it->path() / "RECORD");
    if (!record || !text::contains(*record, relative + ",")) continue;
    const auto stem = name.substr(0, name.size() - std::string_view(".dist-info").size());
    const auto dash = stem.find('-');
    if (dash == std::string::npos) continue;
    wheel = stem.substr(0, dash);
    return stem.substr(dash + 1);
  }
  return "";
}

std::string origin_of(const fs::path& path) {
  for (auto directory = path.parent_path(); directory.has_relative_path();
       directory = directory.parent_path()) {
    if (is_site_packages(directory)) return "pip wheel";
    const auto name = directory.filename().string();
    if (name == "cuda" || text::starts_with(name, "cuda-") ||
        directory.parent_path().filename() == "toolkits")
      return "toolkit";
    if (directory.parent_path().filename() == "cudnn") return "cuDNN";
  }
  return "system";
}

}  // namespace

LibraryCopy describe_copy(const std::string& path) {
  std::error_code error;
  const auto real = fs::canonical(path, error);
  LibraryCopy copy{error ? path : real.string(), "", "", ""};
  const fs::path file(copy.path);
  copy.origin = origin_of(file);
  const auto soname_version = version_in_name(fs::path(path).filename().string());
  const auto file_version = version_in_name(file.filename().string());
  if (file_version.size() > soname_version.size()) {
    copy.version = file_version;
    copy.version_source = "file name";
    return copy;
  }
  for (auto directory = file.parent_path(); directory.has_relative_path();
       directory = directory.parent_path()) {
    if (!is_site_packages(directory)) continue;
    std::string wheel;
    copy.version = wheel_version(directory, file.lexically_relative(directory).string(), wheel);
    if (!copy.version.empty()) {
      copy.version_source = "wheel " + wheel;
      return copy;
    }
    break;
  }
  copy.version = file_version;
  copy.version_source = file_version.empty() ? "" : "soname";
  return copy;
}

std::vector<LibraryCopy> find_copies(const std::string& library,
                                     const std::vector<std::string>& directories) {
  std::vector<LibraryCopy> copies;
  std::set<std::string> seen;
  for (const auto& directory : directories) {
    const auto candidate = fs::path(directory) / library;
    std::error_code error;
    if (!fs::is_regular_file(candidate, error)) continue;
    auto copy = describe_copy(candidate.string());
    if (seen.insert(copy.path).second) copies.push_back(std::move(copy));
  }
  return copies;
}

std::vector<std::string> wheel_library_directories(const std::string& site_packages) {
  std::vector<std::string> directories;
  std::error_code error;
  const auto nvidia = fs::path(site_packages) / "nvidia";
  for (fs::directory_iterator it(nvidia, error), end; !error && it != end; it.increment(error)) {
    for (const char* sub : {"lib", "lib64"}) {
      if (fs::is_directory(it->path() / sub, error))
        directories.push_back((it->path() / sub).string());
    }
  }
  std::sort(directories.begin(), directories.end());
  return directories;
}

}  // namespace cudaenv::scan
