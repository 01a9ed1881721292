#include "scan/copies.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <span>
#include <system_error>

#include "core/files.hpp"
#include "core/text.hpp"
#include "scan/elf.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

namespace {

// "libcudnn.so.9.10.2" → "9.10.2"; "" without a number after ".so.".
std::string version_in_name(const std::string& name) {
  const auto at = name.find(".so.");
  return at == std::string::npos ? "" : name.substr(at + 4);
}

// cuDNN's libraries export their version as a 4-byte value, major << 16 | minor << 8 | patch
// (cudnn_graph_version in libcudnn_graph.so.9 holds 0x00091300 for 9.19.0): read, never run.
std::string version_in_elf(const fs::path& file) {
  auto mapped = MappedFile::open(file);
  if (!mapped) return "";
  auto elf = parse_elf(mapped->bytes());
  if (!elf) return "";
  std::string version;
  const auto read = for_each_symbol(mapped->bytes(), *elf, ".dynsym", [&](const ElfSymbol& symbol) {
    if (symbol.type != symbol_type_object || symbol.size != 4 ||
        !symbol.name.starts_with("cudnn_") || !symbol.name.ends_with("_version"))
      return true;
    const auto bytes = symbol_bytes(mapped->bytes(), *elf, symbol);
    if (!bytes) return true;
    uint32_t value = 0;  // little-endian, as parse_elf only accepts
    std::memcpy(&value, bytes->data(), sizeof value);
    const auto major = value >> 16;
    if (major == 0 || major > 99) return true;
    version = std::to_string(major) + "." + std::to_string(value >> 8 & 0xff) + "." +
              std::to_string(value & 0xff);
    return false;
  });
  return read ? version : "";
}

// The version in the library's own ELF, or for cuDNN's front library (libcudnn.so.9, which
// forwards every call) in libcudnn_graph.so.9 beside it, the library it loads from there.
std::pair<std::string, std::string> version_from_elf(const fs::path& file,
                                                     const std::string& soname_version) {
  if (auto version = version_in_elf(file); !version.empty()) return {version, "the library's ELF"};
  const auto name = file.filename().string();
  if (!text::starts_with(name, "libcudnn.so.") || soname_version.empty()) return {"", ""};
  const auto sibling = "libcudnn_graph.so." + soname_version.substr(0, soname_version.find('.'));
  if (auto version = version_in_elf(file.parent_path() / sibling); !version.empty())
    return {version, "the ELF of " + sibling + " beside it"};
  return {"", ""};
}

bool is_site_packages(const fs::path& directory) {
  const auto name = directory.filename().string();
  return name == "site-packages" || name == "dist-packages";
}

bool record_lists(const std::string& record, const std::string& relative) {
  return text::starts_with(record, relative + ",") || text::contains(record, "\n" + relative + ",");
}

// The "Name:" header of a METADATA file, when it is a plausible distribution name.
std::optional<std::string> project_name(const std::string& metadata) {
  for (const auto& line : text::split(metadata, '\n')) {
    if (line.empty() || line == "\r") break;  // the headers end at the first blank line
    if (!text::starts_with(line, "Name: ")) continue;
    const auto name = std::string(text::trim(line.substr(6)));
    const bool plain =
        !name.empty() && name.size() <= 200 && std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        });
    return plain ? std::optional(name) : std::nullopt;
  }
  return std::nullopt;
}

// The dist-info directory whose RECORD lists `relative` ("nvidia/cu13/lib/libcudart.so.13").
std::optional<PipDistribution> distribution_listing(const fs::path& site,
                                                    const std::string& relative) {
  std::error_code error;
  size_t listed = 0;
  for (fs::directory_iterator it(site, error), end;
       !error && it != end && ++listed <= max_listed_entries; it.increment(error)) {
    const auto name = it->path().filename().string();
    if (!text::ends_with(name, ".dist-info")) continue;
    const auto record = read_small_file_or_empty(it->path() / "RECORD");
    if (!record || !record_lists(*record, relative)) continue;
    const auto stem = name.substr(0, name.size() - std::string_view(".dist-info").size());
    const auto dash = stem.find('-');
    if (dash == std::string::npos) continue;
    PipDistribution found{stem.substr(0, dash), stem.substr(dash + 1), stem.substr(0, dash)};
    if (const auto metadata = read_small_file_or_empty(it->path() / "METADATA"))
      found.project = project_name(*metadata).value_or(found.name);
    return found;
  }
  return std::nullopt;
}

std::string origin_of(const fs::path& path) {
  for (auto directory = path.parent_path(); directory.has_relative_path();
       directory = directory.parent_path()) {
    if (is_site_packages(directory)) return "pip wheel";  // nvidia/cudnn/lib is a wheel's
  }
  for (auto directory = path.parent_path(); directory.has_relative_path();
       directory = directory.parent_path()) {
    const auto name = directory.filename().string();
    if (name == "cuda" || text::starts_with(name, "cuda-") ||
        directory.parent_path().filename() == "toolkits")
      return "toolkit";
    if (directory.parent_path().filename() == "cudnn") return "cuDNN";
  }
  return "system";
}

}  // namespace

std::optional<PipDistribution> pip_distribution_of(const std::string& path) {
  const fs::path file(path);
  for (auto directory = file.parent_path(); directory.has_relative_path();
       directory = directory.parent_path()) {
    if (is_site_packages(directory))
      return distribution_listing(directory, file.lexically_relative(directory).string());
  }
  return std::nullopt;
}

LibraryCopy describe_copy(const std::string& path) {
  std::error_code error;
  const auto real = fs::canonical(path, error);
  LibraryCopy copy{error ? path : real.string(), "", "", ""};
  const fs::path file(copy.path);
  copy.origin = origin_of(file);
  const auto soname_version = version_in_name(fs::path(path).filename().string());
  const auto file_version = version_in_name(file.filename().string());
  if (auto [version, source] = version_from_elf(file, file_version); !version.empty()) {
    copy.version = version;
    copy.version_source = source;
    return copy;
  }
  if (file_version.size() > soname_version.size()) {
    copy.version = file_version;
    copy.version_source = "file name";
    return copy;
  }
  if (const auto wheel = pip_distribution_of(copy.path)) {
    copy.version = wheel->version;
    copy.version_source = "wheel " + wheel->name;
    return copy;
  }
  copy.version = file_version;
  copy.version_source = file_version.empty() ? "" : "soname";
  return copy;
}

std::vector<LibraryCopy> find_copies(const std::string& library,
                                     const std::vector<std::string>& directories) {
  std::vector<LibraryCopy> copies;
  std::set<std::string> seen;
  const auto searched = std::min(directories.size(), max_copy_directories);
  for (const auto& directory : std::span(directories).first(searched)) {
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
  size_t listed = 0;
  for (fs::directory_iterator it(nvidia, error), end;
       !error && it != end && ++listed <= max_listed_entries; it.increment(error)) {
    for (const char* sub : {"lib", "lib64"}) {
      if (fs::is_directory(it->path() / sub, error))
        directories.push_back((it->path() / sub).string());
    }
  }
  std::sort(directories.begin(), directories.end());
  return directories;
}

namespace {

std::string mismatch_fix(const LibraryCopy& loaded, const std::string& loaded_from,
                         const std::string& found_by, const PinnedDirectory& pin) {
  std::vector<std::string> ways;
  if (found_by == "LD_LIBRARY_PATH")
    ways.push_back("scope LD_LIBRARY_PATH: remove " + loaded_from +
                   " from it, or set it only for the program that needs that copy");
  if (const auto wheel = pip_distribution_of(loaded.path))
    ways.push_back("uninstall the stray copy (pip uninstall " + wheel->project + ")");
  else
    ways.push_back("remove the stray copy " + loaded.path);
  if (!loaded.version.empty())
    ways.push_back("pin to match it (" + pin.pin_command + " " + loaded.version + ")");
  return text::join(ways, "; or ");
}

}  // namespace

std::optional<Mismatch> pinned_mismatch(const std::string& library, const LibraryCopy& loaded,
                                        const std::string& loaded_from, const std::string& found_by,
                                        const std::vector<PinnedDirectory>& pins) {
  for (const auto& pin : pins) {
    const auto candidate = fs::path(pin.directory) / library;
    std::error_code error;
    if (pin.directory.empty() || !fs::is_regular_file(candidate, error)) continue;
    const auto expected = describe_copy(candidate.string());
    if (expected.path == loaded.path || expected.version == loaded.version) return std::nullopt;
    return Mismatch{pin.what + " has " + library + " " +
                        (expected.version.empty() ? "of unknown version" : expected.version) +
                        ", but " + (loaded.version.empty() ? "another copy" : loaded.version) +
                        " loads",
                    mismatch_fix(loaded, loaded_from, found_by, pin)};
  }
  return std::nullopt;
}

}  // namespace cudaenv::scan
