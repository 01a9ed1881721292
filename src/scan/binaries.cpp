#include "scan/binaries.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <system_error>

#include "core/parallel.hpp"
#include "core/text.hpp"
#include "scan/elf.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

namespace {

// Names worth opening: shared objects, Python extensions, and extension-less executables.
bool may_be_binary(const fs::directory_entry& entry) {
  const auto name = entry.path().filename().string();
  if (text::contains(name, ".so")) return true;
  if (entry.path().has_extension()) return false;
  std::error_code error;
  const auto permissions = entry.status(error).permissions();
  return !error && (permissions & fs::perms::owner_exec) != fs::perms::none;
}

void collect(const fs::path& root, size_t max_files, WalkResult& result,
             std::vector<fs::path>& files) {
  std::error_code error;
  // A root itself is followed (/usr/local/cuda is usually a link); links inside it are not.
  const auto status = fs::status(root, error);
  if (error || !fs::exists(status)) {
    result.unreadable.push_back(root.string());
    return;
  }
  if (fs::is_regular_file(status)) {
    files.push_back(root);
    return;
  }
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error);
  if (error) {
    result.unreadable.push_back(root.string());
    return;
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    if (++result.files_seen > max_files) {
      result.truncated = true;
      return;
    }
    if (it->is_symlink(error) || !it->is_regular_file(error)) continue;
    if (may_be_binary(*it)) files.push_back(it->path());
  }
}

}  // namespace

bool is_cuda_library(std::string_view soname) {
  static constexpr std::array<std::string_view, 16> prefixes{
      "libcuda.",    "libcudart.",  "libcublas",  "libcudnn",     "libcufft",     "libcurand",
      "libcusparse", "libcusolver", "libnccl.",   "libnvrtc",     "libnvJitLink", "libnvToolsExt",
      "libcupti.",   "libcufile",   "libnvshmem", "libnvidia-ml."};
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view prefix) { return text::starts_with(soname, prefix); });
}

std::optional<BinaryScan> scan_binary(const fs::path& path) {
  auto file = MappedFile::open(path);
  if (!file || !is_elf(file->bytes())) return std::nullopt;
  BinaryScan scan;
  scan.path = path.string();
  auto elf = parse_elf(file->bytes());
  if (!elf) {
    scan.error = elf.error().message;
    return scan;
  }
  for (const auto& needed : elf->needed) {
    if (is_cuda_library(needed)) scan.cuda_needed.push_back(needed);
  }
  if (const auto* section = elf->section(".nv_fatbin")) {
    const auto bytes = section_bytes(file->bytes(), *section);
    auto codes = bytes ? parse_fatbin_section(*bytes)
                       : Result<std::vector<GpuCode>>(
                             make_error(ErrorKind::failure, ".nv_fatbin lies outside the file"));
    if (codes)
      scan.codes = std::move(*codes);
    else
      scan.error = codes.error().message;
  }
  // Libraries that register their kernels from large data sections (cuFFT) rather than
  // .nv_fatbin: searched for containers only when .nv_fatbin is present at all.
  for (const char* name : {".ldata", ".lrodata"}) {
    const auto* section = elf->section(name);
    const auto bytes = section && elf->section(".nv_fatbin")
                           ? section_bytes(file->bytes(), *section)
                           : std::nullopt;
    if (!bytes) continue;
    // Containers are 8-byte aligned in the file, whatever the section's own alignment.
    const auto skip = std::min<size_t>((8 - section->offset % 8) % 8, bytes->size());
    auto found = find_embedded_fatbins(bytes->subspan(skip));
    scan.codes.insert(scan.codes.end(), found.begin(), found.end());
  }
  scan.codes = distinct(std::move(scan.codes));
  if (scan.codes.empty() && scan.cuda_needed.empty() && scan.error.empty()) return std::nullopt;
  return scan;
}

WalkResult scan_paths(const std::vector<fs::path>& roots, size_t max_files) {
  WalkResult result;
  std::vector<fs::path> files;
  for (const auto& root : roots) collect(root, max_files, result, files);
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  std::vector<std::optional<BinaryScan>> scans(files.size());
  // Reading is mostly page faults on large files: a few threads overlap them.
  (void)for_each_in_parallel(files.size(), 4, "scanning binaries",
                             [&](size_t index, const FirstError&) -> Status {
                               scans[index] = scan_binary(files[index]);
                               return Ok{};
                             });
  for (auto& scan : scans) {
    if (scan) result.binaries.push_back(std::move(*scan));
  }
  return result;
}

}  // namespace cudaenv::scan
