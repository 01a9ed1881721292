#include "install/writable.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>

#include <sys/stat.h>

#include "core/accounts.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

namespace {

// The path itself when it exists, else its nearest existing ancestor: what refused the write.
fs::path what_is_in_the_way(const fs::path& path) {
  std::error_code ec;
  auto current = path;
  while (!current.empty() && !fs::exists(fs::symlink_status(current, ec))) {
    if (current == current.parent_path()) break;
    current = current.parent_path();
  }
  return current;
}

// The passwd name where the program installed a lookup (never in the static ones: no NSS).
std::string user_name(uid_t uid) {
  return accounts::user_name(uid).value_or("uid " + std::to_string(uid));
}

std::string octal_mode(mode_t mode) {
  std::array<char, 8> text{};
  std::snprintf(text.data(), text.size(), "%04o", static_cast<unsigned>(mode & 07777));
  return text.data();
}

Error owned_by_someone_else(const std::string& failed, const fs::path& blocking, uid_t owner) {
  const auto name = user_name(owner);
  const auto run_as = owner == 0 ? std::string("run the command with sudo (keeping CUDAENV_ROOT)")
                                 : "run the command as " + name + " (sudo -u " + name + ")";
  return make_error(ErrorKind::failure,
                    failed + ": " + blocking.string() + " belongs to " + name + " and you are " +
                        user_name(::geteuid()),
                    "set CUDAENV_ROOT to a directory you own, " + run_as +
                        ", or ask the administrator for write access to " + blocking.string());
}

// `failed` says what could not be done ("cannot write /x"); `blocking` is what refused it.
Error explain(const std::string& failed, const fs::path& blocking, int error_number) {
  struct stat status {};
  const bool known = ::stat(blocking.c_str(), &status) == 0;
  if (error_number == EROFS) {
    return make_error(ErrorKind::failure,
                      failed + ": " + blocking.string() + " is on a read-only filesystem",
                      "set CUDAENV_ROOT to a directory on a writable filesystem");
  }
  if ((error_number == EACCES || error_number == EPERM) && known) {
    if (status.st_uid != ::geteuid()) return owned_by_someone_else(failed, blocking, status.st_uid);
    return make_error(
        ErrorKind::failure,
        failed + ": " + blocking.string() + " is yours but not writable (mode " +
            octal_mode(status.st_mode) + ")",
        "run: chmod u+w " + blocking.string() + " (or set CUDAENV_ROOT to another directory)");
  }
  return make_error(
      ErrorKind::failure,
      failed + ": " + std::error_code(error_number, std::generic_category()).message(),
      "check the cudaenv data root (CUDAENV_ROOT), its permissions and its free space");
}

}  // namespace

Error unwritable_error(const fs::path& path, int error_number) {
  return explain("cannot write " + path.string(), what_is_in_the_way(path), error_number);
}

Error unremovable_error(const fs::path& path, int error_number) {
  return explain("cannot remove " + path.string(), path.parent_path(), error_number);
}

Status ensure_writable_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return unwritable_error(dir, ec.value());
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0)
    return unwritable_error(dir, errno);
  return Ok{};
}

}  // namespace cudaenv::install
