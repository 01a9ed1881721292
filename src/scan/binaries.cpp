#include "scan/binaries.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>
#include <utility>

#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/parallel.hpp"
#include "core/text.hpp"
#include "scan/elf.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

namespace {

// FIFOs, devices and sockets named in a report; the rest are counted.
constexpr size_t max_special_named = 20;

// An open directory stream, closed when it goes.
class DirectoryStream {
 public:
  explicit DirectoryStream(DIR* dir) : dir_(dir) {}
  DirectoryStream(DirectoryStream&& other) noexcept : dir_(std::exchange(other.dir_, nullptr)) {}
  DirectoryStream& operator=(DirectoryStream&&) = delete;
  DirectoryStream(const DirectoryStream&) = delete;
  DirectoryStream& operator=(const DirectoryStream&) = delete;
  ~DirectoryStream() {
    if (dir_) ::closedir(dir_);
  }
  DIR* get() const { return dir_; }
  int fd() const { return ::dirfd(dir_); }

 private:
  DIR* dir_;
};

// Opens the directory `name` relative to `parent`: O_NOFOLLOW below a root (a link swapped in
// is not followed), O_NONBLOCK so a FIFO swapped in cannot block, O_DIRECTORY so it fails.
// Relative to the parent's descriptor, a path deeper than PATH_MAX opens as well as any.
Result<DirectoryStream> open_directory(int parent, const char* name, bool follow) {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
  UniqueFd fd(::openat(parent, name, flags));
  if (!fd) return make_error(ErrorKind::failure, std::strerror(errno));
  DIR* dir = ::fdopendir(fd.get());
  if (!dir) return make_error(ErrorKind::failure, std::strerror(errno));
  fd.release();  // the stream owns it now
  return DirectoryStream(dir);
}

// What a FIFO, device or socket is, for the report; nullptr for anything else.
const char* special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return nullptr;
}

// The file type readdir reports, as st_mode type bits; 0 when the file system does not say.
mode_t type_from_dirent(unsigned char type) {
  switch (type) {
    case DT_REG: return S_IFREG;
    case DT_DIR: return S_IFDIR;
    case DT_LNK: return S_IFLNK;
    case DT_FIFO: return S_IFIFO;
    case DT_SOCK: return S_IFSOCK;
    case DT_CHR: return S_IFCHR;
    case DT_BLK: return S_IFBLK;
    default: return 0;
  }
}

std::string joined(const std::string& directory, const char* name) {
  return directory.ends_with('/') ? directory + name : directory + "/" + name;
}

// Names worth opening: shared objects, Python extensions, and extension-less executables.
bool may_be_binary(const char* name, mode_t mode) {
  if (std::strstr(name, ".so")) return true;
  if (fs::path(name).has_extension()) return false;
  return (mode & S_IXUSR) != 0;
}

std::string size_text(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB"
                                    : std::to_string(bytes) + " bytes";
}

bool is_dot_or_dot_dot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// One walk over the roots: an explicit stack of open directories, one per level, never
// recursion; every limit of WalkLimits checked before anything is kept.
class Walk {
 public:
  Walk(const WalkLimits& limits, WalkResult& result, std::vector<std::string>& files)
      : limits_(limits), result_(result), files_(files) {}

  void root(const fs::path& root) {
    if (stopped_) return;
    struct stat info {};
    const auto path = root.string();
    // A root itself is followed (/usr/local/cuda is usually a link); links inside it are not.
    if (::stat(path.c_str(), &info) != 0) {
      result_.unreadable.push_back(path);
      return;
    }
    if (S_ISREG(info.st_mode)) {
      keep(path, path);
      return;
    }
    if (const char* kind = special_kind(info.st_mode)) {
      note_special(path, kind);
      return;
    }
    auto top = open_directory(AT_FDCWD, path.c_str(), true);
    if (!top) {
      result_.unreadable.push_back(path);
      return;
    }
    tree(std::move(*top), path);
  }

 private:
  struct Level {
    DirectoryStream stream;
    std::string path;
  };

  void tree(DirectoryStream top, const std::string& root) {
    std::vector<Level> stack;
    stack.push_back({std::move(top), root});
    too_deep_ = 0;
    first_too_deep_.clear();
    while (!stack.empty() && !stopped_) {
      errno = 0;
      const dirent* entry = ::readdir(stack.back().stream.get());
      if (!entry) {
        if (errno != 0) result_.unreadable.push_back(stack.back().path);  // listing failed
        stack.pop_back();
        continue;
      }
      if (is_dot_or_dot_dot(entry->d_name)) continue;
      if (++result_.files_seen > limits_.max_entries) {
        stop(stack.back().path + ": stopped after " + std::to_string(limits_.max_entries) +
             " entries (the entry limit of a scan); name narrower paths");
        break;
      }
      const auto& level = stack.back();
      mode_t mode = type_from_dirent(entry->d_type);
      if (needs_stat(mode, entry->d_name)) {
        struct stat info {};
        if (::fstatat(level.stream.fd(), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0)
          continue;  // gone since it was listed
        mode = info.st_mode;
      }
      // The path is built only for what is kept or named: most entries are neither.
      if (S_ISDIR(mode)) {
        descend(stack, entry->d_name);
      } else if (S_ISREG(mode)) {
        if (may_be_binary(entry->d_name, mode)) keep(joined(level.path, entry->d_name), root);
      } else if (const char* kind = special_kind(mode)) {
        note_special(joined(level.path, entry->d_name), kind);
      }  // links are not followed
    }
    if (too_deep_ > 0)
      warn(first_too_deep_ + ": more than " + std::to_string(limits_.max_depth) +
           " directories below " + root + " (the depth limit of a scan); " +
           std::to_string(too_deep_) + " director" + (too_deep_ == 1 ? "y" : "ies") +
           " that deep not scanned");
  }

  // The type alone decides, except for an extension-less file (its execute bit counts) and a
  // file system that does not report types.
  static bool needs_stat(mode_t mode, const char* name) {
    if (mode == 0) return true;
    return S_ISREG(mode) && !std::strstr(name, ".so") && !fs::path(name).has_extension();
  }

  void descend(std::vector<Level>& stack, const char* name) {
    if (stack.size() > limits_.max_depth) {
      if (too_deep_++ == 0) first_too_deep_ = joined(stack.back().path, name);
      return;
    }
    auto child = joined(stack.back().path, name);
    auto opened = open_directory(stack.back().stream.fd(), name, false);
    if (!opened) {
      if (charge_path(child, stack.front().path)) result_.unreadable.push_back(std::move(child));
      return;
    }
    stack.push_back({std::move(*opened), std::move(child)});
  }

  void keep(std::string path, const std::string& root) {
    if (charge_path(path, root)) files_.push_back(std::move(path));
  }

  // Paths kept (files to read, directories that could not be listed) count against the path
  // limit; false, and the walk stopped, once it is passed.
  bool charge_path(const std::string& path, const std::string& root) {
    path_bytes_ += path.size();
    if (path_bytes_ <= limits_.max_path_bytes) return true;
    stop(root + ": stopped after " + size_text(limits_.max_path_bytes) +
         " of file paths to read (the path limit of a scan); name narrower paths");
    return false;
  }

  void note_special(const std::string& path, const char* kind) {
    if (result_.special_count++ < max_special_named)
      result_.special.push_back(path + " (" + kind + ")");
  }

  void warn(std::string warning) {
    result_.truncated = true;
    result_.warnings.push_back(std::move(warning));
  }

  void stop(std::string warning) {
    warn(std::move(warning));
    stopped_ = true;
  }

  const WalkLimits& limits_;
  WalkResult& result_;
  std::vector<std::string>& files_;
  size_t path_bytes_ = 0;
  size_t too_deep_ = 0;
  std::string first_too_deep_;
  bool stopped_ = false;
};

// The reason an open failed, without the path the error message starts with.
std::string reason_of(const Error& error, const std::string& path) {
  const auto prefix = path + ": ";
  return text::starts_with(error.message, prefix) ? error.message.substr(prefix.size())
                                                  : error.message;
}

// One file, read on a worker thread: whatever it throws comes back as the run's error.
Status scan_into(const std::string& path, std::optional<BinaryScan>& slot) {
  try {
    slot = scan_binary(path);
    return Ok{};
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::failure, path + ": out of memory while reading it",
                      "scan fewer paths at once, or give the scan more memory");
  } catch (const std::exception& error) {
    return make_error(ErrorKind::failure, path + ": " + error.what());
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

// A file truncated while it was mapped: what was parsed is zeros, not the file.
constexpr const char* changed_while_read =
    "changed while it was read (another process truncated it): scan it again";

std::optional<BinaryScan> scan_binary(const fs::path& path) {
  BinaryScan scan;
  scan.path = path.string();
  auto file = MappedFile::open(path);
  if (!file) {
    scan.unreadable = true;
    scan.error = "cannot be read: " + reason_of(file.error(), scan.path);
    return scan;
  }
  if (!is_elf(file->bytes())) return std::nullopt;
  auto elf = parse_elf(file->bytes());
  if (!elf) {
    scan.error = file->changed() ? changed_while_read : elf.error().message;
    return scan;
  }
  for (const auto& needed : elf->needed) {
    if (is_cuda_library(needed)) scan.cuda_needed.emplace_back(needed);
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
    if (!found) {
      scan.error = std::string(name) + ": " + found.error().message;
      continue;
    }
    scan.codes.insert(scan.codes.end(), found->begin(), found->end());
  }
  if (file->changed()) {
    scan.codes.clear();
    scan.cuda_needed.clear();
    scan.unreadable = true;
    scan.error = changed_while_read;
    return scan;
  }
  scan.codes = distinct(std::move(scan.codes));
  if (scan.codes.empty() && scan.cuda_needed.empty() && scan.error.empty()) return std::nullopt;
  return scan;
}

WalkResult scan_paths(const std::vector<fs::path>& roots, const WalkLimits& limits) {
  WalkResult result;
  try {
    std::vector<std::string> files;
    Walk walk(limits, result, files);
    for (const auto& root : roots) walk.root(root);
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    std::vector<std::optional<BinaryScan>> scans(files.size());
    // Reading is mostly page faults on large files: a few threads overlap them.
    auto read = for_each_in_parallel(
        files.size(), 4, "scanning binaries",
        [&](size_t index, const FirstError&) { return scan_into(files[index], scans[index]); });
    if (!read) {
      result.failure = read.error();
      return result;
    }
    for (auto& scan : scans) {
      if (!scan) continue;
      if (scan->unreadable) ++result.unreadable_files;
      result.binaries.push_back(std::move(*scan));
    }
  } catch (const std::bad_alloc&) {
    result.binaries.clear();
    result.failure = make_error(ErrorKind::failure, "out of memory while walking the scanned paths",
                                "scan fewer paths at once, or give the scan more memory");
  }
  return result;
}

}  // namespace cudaenv::scan
