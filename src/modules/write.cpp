#include "modules/write.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"

namespace cudaenv::modules {

namespace fs = std::filesystem;

namespace {

constexpr const char* family_names[] = {"cuda", "cudnn"};
constexpr std::size_t marker_window = 256;

Error refused(const fs::path& path, const std::string& why) {
  return make_error(
      ErrorKind::usage,
      text::printable(path.string(), text::message_limit) + " " + why + "; it was left as it is",
      "move it aside, or write the modulefiles into another directory");
}

// Whether the entry `name` of the directory at `dir` is a regular file (never a link: it is not
// followed) whose first lines carry the marker.
bool written_by_us(int dir, const std::string& name) {
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  std::string head(marker_window, '\0');
  const auto got = ::read(fd.get(), head.data(), head.size());
  if (got <= 0) return false;
  head.resize(static_cast<std::size_t>(got));
  return head.find(generated_marker) != std::string::npos;
}

// A family directory (DIR/cuda, DIR/cudnn), open: every check, removal and write below goes
// through this descriptor, so swapping the name for a link after the check (to /etc, to another
// user's directory) cannot carry a write elsewhere.
struct Family {
  std::string name;
  fs::path path;
  UniqueFd fd;
};

// Made when missing; a link or anything but a directory there is refused. O_NOFOLLOW on the open
// is the guard itself; the lstat before it only words the refusal.
Result<Family> open_family(int dir, const fs::path& dir_path, const char* name) {
  Family family{name, dir_path / name, UniqueFd()};
  if (::mkdirat(dir, name, 0755) != 0 && errno != EEXIST)
    return make_error(ErrorKind::failure,
                      "cannot create " +
                          text::printable(family.path.string(), text::message_limit) + ": " +
                          std::strerror(errno),
                      "choose a modules directory you can write to");
  struct stat info {};
  if (::fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(info.st_mode)) return refused(family.path, "is a symbolic link, not a directory");
    if (!S_ISDIR(info.st_mode)) return refused(family.path, "is not a directory");
  }
  family.fd = UniqueFd(::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!family.fd)
    return errno == ELOOP || errno == ENOTDIR
               ? refused(family.path, "is not a directory (or became a link)")
               : make_error(ErrorKind::failure,
                            "cannot open " +
                                text::printable(family.path.string(), text::message_limit) + ": " +
                                std::strerror(errno),
                            "choose a modules directory you can write to");
  return family;
}

// "cuda/13.0.2.lua" -> the family and the file's name in it.
std::pair<std::string, std::string> split_relative(const std::string& relative) {
  const auto slash = relative.find('/');
  return {relative.substr(0, slash), relative.substr(slash + 1)};
}

Family* family_of(std::vector<Family>& families, const std::string& relative) {
  const auto name = split_relative(relative).first;
  for (auto& family : families)
    if (family.name == name) return &family;
  return nullptr;
}

// Every file about to be written is absent, or one of ours: never a link, a directory or a
// site's own file of that name.
Status check_targets(std::vector<Family>& families, const std::vector<ModuleFile>& files) {
  for (const auto& file : files) {
    auto* family = family_of(families, file.relative);
    const auto leaf = split_relative(file.relative).second;
    if (family == nullptr || leaf.empty() || leaf.find('/') != std::string::npos)
      return make_error(ErrorKind::failure,
                        "a modulefile outside cuda/ and cudnn/: " + text::printable(file.relative));
    const auto target = family->path / leaf;
    struct stat info {};
    if (::fstatat(family->fd.get(), leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISLNK(info.st_mode)) return refused(target, "is a symbolic link");
    if (!written_by_us(family->fd.get(), leaf))
      return refused(target, "exists and was not written by cudaenv");
  }
  return Ok{};
}

// The names in a family directory, read through its descriptor (at most max_entries).
std::vector<std::string> names_in(const Family& family) {
  constexpr std::size_t max_entries = 100000;
  std::vector<std::string> names;
  UniqueFd copy(::fcntl(family.fd.get(), F_DUPFD_CLOEXEC, 0));
  DIR* listing = copy ? ::fdopendir(copy.get()) : nullptr;
  if (listing == nullptr) return names;
  (void)copy.release();  // closedir closes it
  ::rewinddir(listing);
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
    if (names.size() >= max_entries) break;
  }
  ::closedir(listing);
  return names;
}

// Files an earlier run wrote in DIR/cuda and DIR/cudnn that this run does not write.
std::vector<std::string> stale_files(const std::vector<Family>& families,
                                     const std::vector<ModuleFile>& files) {
  std::vector<std::string> stale;
  for (const auto& family : families) {
    for (const auto& name : names_in(family)) {
      const auto relative = family.name + "/" + name;
      const bool kept = std::any_of(files.begin(), files.end(),
                                    [&](const ModuleFile& f) { return f.relative == relative; });
      if (!kept && written_by_us(family.fd.get(), name)) stale.push_back(relative);
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

}  // namespace

Result<WriteReport> write_modulefiles(const fs::path& dir, const std::vector<ModuleFile>& files) {
  std::error_code ec;
  fs::create_directories(dir, ec);  // the directory the admin named: its own path is theirs
  const UniqueFd top(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top)
    return make_error(ErrorKind::failure,
                      "cannot open " + text::printable(dir.string(), text::message_limit) + ": " +
                          std::strerror(errno),
                      "choose a modules directory you can write to");
  std::vector<Family> families;
  for (const char* name : family_names) {
    auto family = open_family(top.get(), dir, name);
    if (!family) return family.error();
    families.push_back(std::move(*family));
  }
  if (auto ok = check_targets(families, files); !ok) return ok.error();
  WriteReport report;
  for (const auto& relative : stale_files(families, files)) {
    // Removes the name: a file of ours, never a link's target.
    ::unlinkat(family_of(families, relative)->fd.get(), split_relative(relative).second.c_str(), 0);
    report.removed.push_back(relative);
  }
  for (const auto& file : files) {
    auto* family = family_of(families, file.relative);
    const auto leaf = split_relative(file.relative).second;
    if (auto written =
            write_file_atomically_at(family->fd.get(), leaf, file.text, family->path / leaf, 0644);
        !written)
      return make_error(ErrorKind::failure, text::printable(written.error().message),
                        "choose a modules directory you can write to");
    report.written.push_back(file.relative);
  }
  return report;
}

}  // namespace cudaenv::modules
