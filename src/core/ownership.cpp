#include "core/ownership.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string_view>

#include <sys/stat.h>

#include "core/fd.hpp"

namespace cudaenv::ownership {

namespace fs = std::filesystem;

namespace {

std::string octal_mode(mode_t mode) {
  std::array<char, 8> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%04o", static_cast<unsigned>(mode & 07777));
  return buffer.data();
}

// What is wrong with a path whose stat is `status`, or "" when nothing is.
std::string problem_with(const struct stat& status) {
  const uid_t me = ::geteuid();
  if (status.st_uid != me && status.st_uid != 0)
    return "is owned by uid " + std::to_string(status.st_uid) + " (you are " + std::to_string(me) +
           ")";
  if ((status.st_mode & (S_IWGRP | S_IWOTH)) == 0) return "";
  const bool sticky_and_mine =
      S_ISDIR(status.st_mode) && (status.st_mode & S_ISVTX) != 0 && status.st_uid == me;
  if (sticky_and_mine) return "";
  return "is writable by " +
         std::string((status.st_mode & S_IWOTH) != 0 ? "every user" : "its group") + " (mode " +
         octal_mode(status.st_mode) + ")";
}

std::string fix_for(const fs::path& path, const struct stat& status) {
  if (status.st_uid != ::geteuid() && status.st_uid != 0)
    return "chown " + std::to_string(::geteuid()) + " " + path.string();
  return "chmod go-w " + path.string();
}

Status verdict(const fs::path& path, const struct stat& status, const Subject& subject) {
  const auto problem = problem_with(status);
  if (problem.empty()) return Ok{};
  return make_error(ErrorKind::failure,
                    subject.what + " " + path.string() + " " + problem + ": " + subject.consequence,
                    "run: " + fix_for(path, status) + " (or " + subject.alternative + ")");
}

struct DirectoryCloser {
  void operator()(DIR* directory) const { ::closedir(directory); }
};

// The directory at `dir` (already checked) and every entry in it, as the programs they are: stat
// follows links, so a link is judged by the file it leads to. One open and one fstatat per entry.
Status check_programs_in(const fs::path& dir, const Subject& subject) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Ok{};  // nothing there: nothing to run from it
  std::unique_ptr<DIR, DirectoryCloser> listing(::fdopendir(fd.get()));
  if (!listing) return Ok{};
  fd.release();  // the listing owns it now
  const int descriptor = ::dirfd(listing.get());
  while (const struct dirent* entry = ::readdir(listing.get())) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat status {};
    if (::fstatat(descriptor, entry->d_name, &status, 0) != 0) continue;  // a dangling link
    if (auto checked = verdict(dir / name, status, subject); !checked) return checked;
  }
  return Ok{};
}

}  // namespace

Status check_path(const fs::path& path, const Subject& subject) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return Ok{};  // nothing there: nothing to run from it
  return verdict(path, status, subject);
}

Status check_data_root(const fs::path& root) {
  static const Subject subject{"data root", "a toolkit planted there would run as you",
                               "set CUDAENV_ROOT to a directory you own"};
  if (!root.is_absolute())
    return make_error(ErrorKind::usage,
                      "data root " + root.string() +
                          " is not an absolute path: it would be a directory below wherever "
                          "cudaenv runs",
                      subject.alternative + ", as an absolute path");
  if (auto checked = check_path(root, subject); !checked) return checked;
  static const Subject inside{"data root directory", subject.consequence, subject.alternative};
  for (const char* below : {"toolkits", "cudnn", "shims"}) {
    if (auto checked = check_path(root / below, inside); !checked) return checked;
  }
  return Ok{};
}

Status check_prefix(const fs::path& prefix, const PrefixLayout& layout, const std::string& kind) {
  const std::string alternative = "reinstall the " + kind + " somewhere only you can write";
  const Subject directory{kind + " directory", "a program planted there would run as you",
                          alternative};
  if (auto checked = check_path(prefix, directory); !checked) return checked;
  const Subject program{kind + " program", "whoever can change it runs code as you", alternative};
  for (const auto& below : layout.program_directories) {
    // Each level down to it (nvvm/, then nvvm/bin/): whoever can write one can replace the next.
    fs::path level = prefix;
    bool present = true;
    for (const auto& part : fs::path(below)) {
      level /= part;
      struct stat status {};
      present = ::stat(level.c_str(), &status) == 0;
      if (!present) break;  // nothing below it to run either
      if (auto checked = verdict(level, status, directory); !checked) return checked;
    }
    if (!present) continue;
    if (auto checked = check_programs_in(level, program); !checked) return checked;
  }
  const Subject libraries{kind + " library directory",
                          "a library planted there would be loaded by your programs", alternative};
  for (const auto& below : layout.library_directories) {
    if (auto checked = check_path(prefix / below, libraries); !checked) return checked;
  }
  return Ok{};
}

const PrefixLayout& toolkit_layout() {
  static const PrefixLayout layout{{"bin", "nvvm/bin"}, {"lib64"}};
  return layout;
}

const PrefixLayout& cudnn_layout() {
  static const PrefixLayout layout{{}, {"lib", "lib64"}};
  return layout;
}

Status check_config_file(const fs::path& file) {
  static const std::string consequence =
      "whoever can change it chooses the toolkit and the mirror you use";
  static const std::string alternative = "set XDG_CONFIG_HOME to a directory you own";
  if (auto checked = check_path(file.parent_path(), {"config directory", consequence, alternative});
      !checked)
    return checked;
  return check_path(file, {"config file", consequence, alternative});
}

}  // namespace cudaenv::ownership
