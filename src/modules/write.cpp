#include "modules/write.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"

namespace cudaenv::modules {

namespace fs = std::filesystem;

namespace {

constexpr const char* families[] = {"cuda", "cudnn"};
constexpr std::size_t marker_window = 256;

Error refused(const fs::path& path, const std::string& why) {
  return make_error(
      ErrorKind::usage,
      text::printable(path.string(), text::message_limit) + " " + why + "; it was left as it is",
      "move it aside, or write the modulefiles into another directory");
}

// Whether `path` is a regular file (never a link: it is not followed) whose first lines carry
// the marker, read through a descriptor opened without following links.
bool written_by_us(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  std::string head(marker_window, '\0');
  const auto got = ::read(fd.get(), head.data(), head.size());
  if (got <= 0) return false;
  head.resize(static_cast<std::size_t>(got));
  return head.find(generated_marker) != std::string::npos;
}

// DIR/cuda and DIR/cudnn: real directories, made when missing. A link there (to /etc, to
// another user's directory) would carry every write below it elsewhere: refused.
Status family_directory(const fs::path& dir, const char* family) {
  const auto path = dir / family;
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) {
    if (S_ISLNK(info.st_mode)) return refused(path, "is a symbolic link, not a directory");
    if (!S_ISDIR(info.st_mode)) return refused(path, "is not a directory");
    return Ok{};
  }
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec || ::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return make_error(ErrorKind::failure,
                      "cannot create " + text::printable(path.string(), text::message_limit) +
                          ": " + (ec ? ec.message() : std::string(std::strerror(errno))),
                      "choose a modules directory you can write to");
  return Ok{};
}

// Every file about to be written is absent, or one of ours: never a link, a directory or a
// site's own file of that name.
Status check_targets(const fs::path& dir, const std::vector<ModuleFile>& files) {
  for (const auto& file : files) {
    const auto target = dir / file.relative;
    struct stat info {};
    if (::lstat(target.c_str(), &info) != 0) continue;
    if (S_ISLNK(info.st_mode)) return refused(target, "is a symbolic link");
    if (!written_by_us(target)) return refused(target, "exists and was not written by cudaenv");
  }
  return Ok{};
}

// Files an earlier run wrote in DIR/cuda and DIR/cudnn that this run does not write.
std::vector<std::string> stale_files(const fs::path& dir, const std::vector<ModuleFile>& files) {
  std::vector<std::string> stale;
  for (const char* family : families) {
    std::error_code ec;
    for (fs::directory_iterator it(dir / family, ec), end; !ec && it != end; it.increment(ec)) {
      const auto relative = std::string(family) + "/" + it->path().filename().string();
      const bool kept = std::any_of(files.begin(), files.end(),
                                    [&](const ModuleFile& f) { return f.relative == relative; });
      if (!kept && written_by_us(it->path())) stale.push_back(relative);
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

}  // namespace

Result<WriteReport> write_modulefiles(const fs::path& dir, const std::vector<ModuleFile>& files) {
  for (const char* family : families) {
    if (auto ok = family_directory(dir, family); !ok) return ok.error();
  }
  if (auto ok = check_targets(dir, files); !ok) return ok.error();
  WriteReport report;
  for (const auto& relative : stale_files(dir, files)) {
    std::error_code ec;
    fs::remove(dir / relative, ec);  // removes the name: a file of ours, never a link's target
    report.removed.push_back(relative);
  }
  for (const auto& file : files) {
    const auto target = dir / file.relative;
    if (auto written = write_file_atomically(target, file.text, {0644, CreateParents::no});
        !written)
      return make_error(ErrorKind::failure, text::printable(written.error().message),
                        "choose a modules directory you can write to");
    report.written.push_back(file.relative);
  }
  return report;
}

}  // namespace cudaenv::modules
