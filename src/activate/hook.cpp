#include "activate/hook.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "activate/here.hpp"
#include "core/fd.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/store.hpp"
#include "project/project_file.hpp"
#include "project/stores.hpp"
#include "project/targets.hpp"

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
  const UniqueFd file(::open(stamp.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  const struct timespec times[2] = {status.st_mtim, status.st_mtim};
  const bool made = file && ::futimens(file.get(), times) == 0;
  if (!made) return (dir / "unwritable").string();
  remove_older_stamps(dir, key, stamp);
  return stamp.string();
}

// A /proc or /sys file (a .cudaenv linked to one) seems modified at every look: watching it
// would run hook-env, and repeat its complaint, at every prompt.
bool is_kernel_file(const fs::path& path) {
  struct statfs filesystem {};
  return ::statfs(path.c_str(), &filesystem) == 0 &&
         (filesystem.f_type == PROC_SUPER_MAGIC || filesystem.f_type == SYSFS_MAGIC);
}

void watch(std::vector<WatchedFile>& list, const fs::path& path, const fs::path& stamps) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    list.push_back({path.string(), ""});
  } else if (!is_kernel_file(path)) {
    list.push_back({path.string(), stamp_for(path.string(), status, stamps)});
  }
}

// Said once: the shell applies the removal of CUDAENV_DIFF, so the next prompt has none. The
// record's text is not repeated: it is someone else's.
Error foreign_record_notice() {
  return make_error(ErrorKind::usage,
                    std::string(activation_variable) +
                        " was not written by cudaenv; it was ignored and nothing it names changed",
                    "do not set it by hand or from another program");
}

// What the shell is told to change: cudaenv's own variables and nothing else, whatever the
// environment or a record held.
Changes managed_only(Changes changes) {
  std::erase_if(changes, [](const auto& change) {
    return !is_managed_variable(change.first) && change.first != activation_variable &&
           change.first != warned_variable;
  });
  return changes;
}

constexpr std::size_t warned_versions_kept = 8;

// One version of a file: a short key of its path, device, inode, size and modification time.
std::optional<std::string> file_version(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  return path_key(path.string() + '\n' + std::to_string(status.st_dev) + ':' +
                  std::to_string(status.st_ino) + ':' + std::to_string(status.st_size) + ':' +
                  std::to_string(status.st_mtim.tv_sec) + '.' +
                  std::to_string(status.st_mtim.tv_nsec));
}

// CUDAENV_WARNED as the keys it holds; anything else in it (it is input too) is dropped.
std::vector<std::string> warned_versions(const Environment& env) {
  auto keys = text::split(env.get(warned_variable).value_or(""), ':');
  std::erase_if(keys, [](const std::string& key) {
    return key.size() != 16 || key.find_first_not_of("0123456789abcdef") != std::string::npos;
  });
  return keys;
}

// The selection's warnings, and the note that this machine matches none of the declared targets
// (its driver below every floor, a GPU arch none lists), unless this version of their file was said
// already; then remembered in CUDAENV_WARNED.
void add_warnings_once(const project::Selection& selection, const fs::path& file,
                       const LiveMachine& machine, HookOutcome& outcome, Environment& target) {
  std::vector<Error> said;
  for (const auto& warning : selection.warnings)
    said.push_back(make_error(warning.kind, "warning: " + warning.message));
  if (machine.driver && selection.source == project::SelectionSource::project_file) {
    const auto targets = project::read_targets(file);
    if (targets) {
      auto note =
          project::target_mismatch_note(*targets, *machine.driver, machine.gpus, file.string());
      if (!note.empty()) said.push_back(make_error(ErrorKind::usage, "note: " + note));
    }
  }
  if (said.empty()) return;
  auto seen = warned_versions(target);
  const auto version = file_version(file);
  if (version && std::find(seen.begin(), seen.end(), *version) != seen.end()) return;
  for (auto& line : said) outcome.problems.push_back(std::move(line));
  if (!version) return;
  seen.push_back(*version);
  if (seen.size() > warned_versions_kept)
    seen.erase(seen.begin(), seen.end() - static_cast<std::ptrdiff_t>(warned_versions_kept));
  target.set(warned_variable, text::join(seen, ":"));
}

}  // namespace

std::vector<WatchedFile> watch_list(const Environment& env,
                                    const std::optional<fs::path>& project_file) {
  return watch_list(env, project_file, project::store_for(env));
}

std::vector<WatchedFile> watch_list(const Environment& env,
                                    const std::optional<fs::path>& project_file,
                                    const install::Store& store) {
  const auto stamps = store.root / "cache" / "stamps";
  std::vector<WatchedFile> list;
  if (project_file) watch(list, *project_file, stamps);
  watch(list, paths::config_file(env), stamps);
  watch(list, store.toolkits(), stamps);
  watch(list, store.cudnn(), stamps);
  return list;
}

HookOutcome hook_env(const Environment& current, const fs::path& cwd, const LiveMachine& machine) {
  HookOutcome outcome;
  if (holds_foreign_record(current)) outcome.problems.push_back(foreign_record_notice());
  Environment target;
  std::optional<fs::path> project_file;  // the selection found it already; no second walk
  std::optional<install::Store> store;   // and the store: no second lookup
  if (auto activated = activate_here(current, cwd)) {
    if (activated->here.selects_cuda()) store = activated->here.store;
    target = std::move(activated->environment);
    if (activated->toolkit)
      target.set(activation_variable, encode(record_activation(activated->base, target)));
    if (activated->selection.source == project::SelectionSource::project_file)
      project_file = activated->selection.file;
    const auto& selection = activated->selection;
    add_warnings_once(selection,
                      selection.file.empty() ? paths::config_file(current) : selection.file,
                      machine, outcome, target);
  } else {
    outcome.problems.push_back(activated.error());
    target = without_activation(current);
    project_file = project::find_project_file(cwd);  // perhaps the malformed one: watch it too
  }
  outcome.changes = managed_only(changes_between(current, target));
  outcome.watch =
      store ? watch_list(current, project_file, *store) : watch_list(current, project_file);
  return outcome;
}

std::string hook_statements(Shell shell, const HookOutcome& outcome) {
  return render_changes(shell, outcome.changes) + render_watch(shell, outcome.watch);
}

std::string hook_problem_line(const HookOutcome& outcome) {
  std::string lines;
  for (const auto& problem : outcome.problems) {
    auto line = "cudaenv: " + problem.message;
    if (!problem.hint.empty()) line += "; " + problem.hint;
    lines += text::printable(line, 2 * text::message_limit) + "\n";  // it embeds file text
  }
  return lines;
}

}  // namespace cudaenv::activate
