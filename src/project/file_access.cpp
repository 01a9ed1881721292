#include "project/file_access.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>

#include "core/accounts.hpp"

namespace cudaenv::project {

namespace fs = std::filesystem;

namespace {

// "alice (uid 1000)", or "uid 1000" when the passwd database does not know it.
std::string user_named(uid_t uid) {
  const auto name = accounts::user_name(uid);  // the passwd database, in the full program only
  const auto number = "uid " + std::to_string(uid);
  return name ? *name + " (" + number + ")" : number;
}

// The directory a new file would be written into, or the nearest parent that exists.
fs::path existing_directory(const fs::path& file) {
  std::error_code ec;
  auto dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  while (!fs::exists(dir, ec) && dir.has_relative_path()) dir = dir.parent_path();
  return dir;
}

std::string why_not_writable(const fs::path& dir, int error) {
  if (error == EROFS) return "it is on a read-only file system";
  struct stat status {};
  if (::stat(dir.c_str(), &status) != 0) return std::strerror(error);
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(status.st_mode & 07777));
  return "it belongs to " + user_named(status.st_uid) + ", mode " + mode;
}

}  // namespace

Status check_replaceable(const fs::path& file, const std::string& instead) {
  struct stat status {};
  if (::lstat(file.c_str(), &status) == 0 && status.st_uid != ::geteuid()) {
    const auto owner = user_named(status.st_uid);
    return make_error(ErrorKind::failure,
                      file.string() + " belongs to " + owner +
                          ", not to you: cudaenv will not replace another user's file",
                      "ask " + owner + " to change it, or " + instead);
  }
  const auto dir = existing_directory(file);
  if (::access(dir.c_str(), W_OK) != 0) {
    const int error = errno;
    return make_error(
        ErrorKind::failure,
        "cannot write " + file.string() + ": the directory " + dir.string() +
            " is not writable by you (" + why_not_writable(dir, error) + ")",
        "run it in a directory you can write, ask the directory's owner, or " + instead);
  }
  return Ok{};
}

}  // namespace cudaenv::project
