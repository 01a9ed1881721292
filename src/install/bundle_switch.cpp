#include "install/bundle_switch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/safe_write.hpp"
#include "core/text.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

namespace {

constexpr const char* incoming_prefix = ".incoming-";

std::string shown(const fs::path& path) {
  return text::printable(path.string(), text::message_limit);
}

Error cannot(const std::string& what, const fs::path& path, const std::string& reason,
             const fs::path& prefix) {
  return make_error(ErrorKind::failure, "cannot " + what + " " + shown(path) + ": " + reason,
                    "make " + shown(prefix) + " writable and run self-update again");
}

// `link` made a symlink to `target` in one rename: a reader sees the old entry or the link. The
// link is made under an unpredictable name first (core/safe_write.hpp): a name another process
// guessed and planted beforehand can never be followed or reused.
Status place_link(const fs::path& link, const fs::path& target, const fs::path& prefix) {
  std::error_code ec;
  if (fs::is_symlink(link, ec) && fs::read_symlink(link, ec) == target) return Ok{};
  if (auto placed = replace_symlink_atomically(link, target); !placed)
    return make_error(ErrorKind::failure, shown(placed.error().message),
                      "make " + shown(prefix) + " writable and run self-update again");
  return Ok{};
}

// The link for <prefix>/<relative>, through current/: relative, so the prefix can move.
fs::path link_target(const fs::path& relative) {
  fs::path up;
  const auto directory = relative.parent_path();
  for (auto it = directory.begin(); it != directory.end(); ++it) up /= "..";
  return up / "lib" / "cudaenv-bundle" / "current" / relative;
}

// Every file of current/ but bin/cudaenv (the switch itself) reached from the prefix too.
Status link_files(const fs::path& prefix) {
  const auto current = bundle_directory(prefix) / "current";
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(current, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory()) continue;
    const auto relative = fs::relative(it->path(), current);
    if (relative == fs::path("bin") / "cudaenv") continue;
    const auto link = prefix / relative;
    if (fs::is_directory(fs::symlink_status(link, ec))) continue;  // not ours to replace
    if (auto placed = place_link(link, link_target(relative), prefix); !placed) return placed;
  }
  if (ec) return cannot("read", current, ec.message(), prefix);
  return Ok{};
}

// current/ becomes `tree`'s content in one step; the old one is then at `tree`.
Status exchange_current(const fs::path& tree, const fs::path& current, const fs::path& prefix) {
  std::error_code ec;
  if (!fs::exists(current, ec)) {
    fs::rename(tree, current, ec);
    return ec ? cannot("move the new release to", current, ec.message(), prefix) : Status(Ok{});
  }
  if (::renameat2(AT_FDCWD, tree.c_str(), AT_FDCWD, current.c_str(), RENAME_EXCHANGE) == 0)
    return Ok{};
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return cannot("switch", current, std::strerror(errno), prefix);
  // A file system that cannot exchange two directories: two renames, the old one kept aside
  // (a kill between them leaves it at the staging name, and bin/cudaenv without its tree).
  const auto aside = tree.parent_path() / "aside";
  fs::rename(current, aside, ec);
  if (!ec) fs::rename(tree, current, ec);
  if (ec) return cannot("switch", current, ec.message(), prefix);
  fs::rename(aside, tree, ec);
  return Ok{};
}

}  // namespace

fs::path bundle_directory(const fs::path& prefix) { return prefix / "lib" / "cudaenv-bundle"; }

Result<fs::path> running_bundle_prefix(const fs::path& executable) {
  const auto libexec = executable.parent_path();
  const auto top = libexec.parent_path().parent_path();
  std::error_code ec;
  if (libexec.filename() == "cudaenv" && fs::exists(top / "bin" / "cudaenv", ec)) {
    const auto bundles = top.parent_path();
    if (top.filename() == "current" && bundles.filename() == "cudaenv-bundle" &&
        bundles.parent_path().filename() == "lib")
      return bundles.parent_path().parent_path();
    return top;
  }
  return make_error(
      ErrorKind::failure,
      "self-update replaces an installed release bundle; this cudaenv runs from " + shown(libexec),
      "update a build from source with git pull and scripts/setup, or install the "
      "bundle with get-cudaenv (docs/install.md)");
}

Status switch_to_bundle(const fs::path& tree, const fs::path& prefix) {
  const auto bundles = bundle_directory(prefix);
  const auto current = bundles / "current";
  if (auto exchanged = exchange_current(tree, current, prefix); !exchanged) return exchanged;
  // A flat installation switches here: bin/cudaenv becomes the link into current/.
  if (auto front = place_link(
          prefix / "bin" / "cudaenv",
          fs::path("..") / "lib" / "cudaenv-bundle" / "current" / "bin" / "cudaenv", prefix);
      !front)
    return front;
  std::error_code ec;
  if (fs::exists(tree, ec)) {
    fs::remove_all(bundles / "previous", ec);
    fs::rename(tree, bundles / "previous", ec);
  }
  return link_files(prefix);
}

void remove_abandoned_updates(const fs::path& prefix) {
  std::error_code ec;
  for (fs::directory_iterator it(bundle_directory(prefix), ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!text::starts_with(name, incoming_prefix)) continue;
    const auto pid = std::atoi(name.c_str() + std::strlen(incoming_prefix));
    if (pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH)) continue;  // still running
    std::error_code removed;
    fs::remove_all(it->path(), removed);
  }
}

}  // namespace cudaenv::install
