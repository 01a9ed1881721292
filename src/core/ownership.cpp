#include "core/ownership.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>

#include <sys/stat.h>

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

}  // namespace

Status check_path(const fs::path& path, const Subject& subject) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return Ok{};  // nothing there: nothing to run from it
  const auto problem = problem_with(status);
  if (problem.empty()) return Ok{};
  return make_error(ErrorKind::failure,
                    subject.what + " " + path.string() + " " + problem + ": " + subject.consequence,
                    "run: " + fix_for(path, status) + " (or " + subject.alternative + ")");
}

Status check_data_root(const fs::path& root) {
  static const Subject subject{"data root", "a toolkit planted there would run as you",
                               "set CUDAENV_ROOT to a directory you own"};
  if (auto checked = check_path(root, subject); !checked) return checked;
  static const Subject inside{"data root directory", subject.consequence, subject.alternative};
  for (const char* below : {"toolkits", "cudnn", "shims"}) {
    if (auto checked = check_path(root / below, inside); !checked) return checked;
  }
  return Ok{};
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
