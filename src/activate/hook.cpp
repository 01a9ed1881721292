#include "activate/hook.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include <sys/stat.h>

#include "activate/here.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/store.hpp"
#include "project/project_file.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

namespace {

std::string path_key(const std::string& path) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a: a short stable name per path
  for (unsigned char c : path) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

// Other stamps of the same path are stale; a shell still holding one just asks again once.
void remove_older_stamps(const fs::path& dir, const std::string& key, const fs::path& keep) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (text::starts_with(name, key + "-") && it->path() != keep) fs::remove(it->path(), ec);
  }
}

// An empty file with the same modification time as `path` (whose stat is `status`).
std::string stamp_for(const std::string& path, const struct stat& status, const fs::path& dir) {
  const auto key = path_key(path);
  const auto nanoseconds =
      static_cast<long long>(status.st_mtim.tv_sec) * 1000000000LL + status.st_mtim.tv_nsec;
  const auto stamp = dir / (key + "-" + std::to_string(nanoseconds));
  std::error_code ec;
  if (fs::exists(stamp, ec)) return stamp.string();
  fs::create_directories(dir, ec);
  const int fd = ::open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  const struct timespec times[2] = {status.st_mtim, status.st_mtim};
  const bool made = fd >= 0 && ::futimens(fd, times) == 0;
  if (fd >= 0) ::close(fd);
  if (!made) return (dir / "unwritable").string();
  remove_older_stamps(dir, key, stamp);
  return stamp.string();
}

WatchedFile watched(const fs::path& path, const fs::path& stamps) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return {path.string(), ""};
  return {path.string(), stamp_for(path.string(), status, stamps)};
}

}  // namespace

std::vector<WatchedFile> watch_list(const Environment& env,
                                    const std::optional<fs::path>& project_file) {
  const install::Store store{paths::data_root(env)};
  const auto stamps = store.root / "cache" / "stamps";
  std::vector<WatchedFile> watch;
  if (project_file) watch.push_back(watched(*project_file, stamps));
  watch.push_back(watched(paths::config_file(env), stamps));
  watch.push_back(watched(store.toolkits(), stamps));
  watch.push_back(watched(store.cudnn(), stamps));
  return watch;
}

HookOutcome hook_env(const Environment& current, const fs::path& cwd) {
  HookOutcome outcome;
  Environment target;
  std::optional<fs::path> project_file;  // the selection found it already; no second walk
  if (auto activated = activate_here(current, cwd)) {
    target = std::move(activated->environment);
    if (activated->toolkit)
      target.set(activation_variable, encode(record_activation(activated->base, target)));
    if (activated->selection.source == project::SelectionSource::project_file)
      project_file = activated->selection.file;
  } else {
    outcome.problem = activated.error();
    target = without_activation(current);
    project_file = project::find_project_file(cwd);  // perhaps the malformed one: watch it too
  }
  outcome.changes = changes_between(current, target);
  outcome.watch = watch_list(current, project_file);
  return outcome;
}

std::string hook_statements(Shell shell, const HookOutcome& outcome) {
  return render_changes(shell, outcome.changes) + render_watch(shell, outcome.watch);
}

std::string hook_problem_line(const HookOutcome& outcome) {
  if (!outcome.problem) return "";
  auto line = "cudaenv: " + outcome.problem->message;
  if (!outcome.problem->hint.empty()) line += "; " + outcome.problem->hint;
  return text::printable(line, 2 * text::message_limit) + "\n";  // it embeds file text
}

}  // namespace cudaenv::activate
