#include "core/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <sys/wait.h>

#include "core/files.hpp"
#include "core/text.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in any header

namespace cudaenv {

namespace {

// Closes both ends on scope exit so no descriptor leaks on an early return.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  bool open() { return ::pipe2(fds, O_CLOEXEC) == 0; }
  void close_end(int which) {
    ::close(fds[which]);
    fds[which] = -1;
  }
};

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Reads both pipes until they close or the deadline passes.
bool drain(Pipe& out, Pipe& err, ProcessResult& result,
           std::chrono::steady_clock::time_point deadline) {
  std::array<pollfd, 2> fds{pollfd{out.fds[0], POLLIN, 0}, pollfd{err.fds[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  return true;
}

// A child that exits without reading its input must not kill us with SIGPIPE: the write fails
// with EPIPE instead (MSG_NOSIGNAL does not apply to pipes, so the signal is ignored here).
void write_all(int fd, const std::string& data) {
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
}

}  // namespace

Result<ProcessResult> SystemProcessRunner::run(const Command& command) {
  if (command.argv.empty()) return make_error(ErrorKind::failure, "empty command line");
  Pipe in, out, err;
  if (!out.open() || !err.open() || (!command.input.empty() && !in.open())) {
    return make_error(ErrorKind::failure,
                      std::string("cannot create pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (command.input.empty()) {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&actions, in.fds[0], 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);

  std::vector<std::string> argv_storage = command.argv;
  auto argv = c_strings(argv_storage);
  std::vector<std::string> env_storage;
  if (command.environment) {
    for (const auto& [name, value] : *command.environment)
      env_storage.push_back(name + "=" + value);
  }
  auto envp = c_strings(env_storage);

  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(),
                                         command.environment ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    return make_error(ErrorKind::failure,
                      "cannot run " + command.argv[0] + ": " + std::strerror(spawn_error));
  }
  out.close_end(1);
  err.close_end(1);
  if (!command.input.empty()) {
    in.close_end(0);
    write_all(in.fds[1], command.input);
    in.close_end(1);
  }

  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + command.timeout;
  if (!drain(out, err, result, deadline)) {
    result.timed_out = true;
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = decode_wait_status(status);
  return result;
}

std::optional<std::string> find_in_path(const std::string& name, const std::string& search_path,
                                        const std::vector<std::string>& skip) {
  std::vector<std::string> skipped;
  for (const auto& dir : skip) skipped.push_back(text::without_trailing_slashes(dir));
  std::size_t start = 0;
  while (start <= search_path.size()) {
    auto end = search_path.find(':', start);
    if (end == std::string::npos) end = search_path.size();
    auto dir = text::without_trailing_slashes(search_path.substr(start, end - start));
    start = end + 1;
    if (std::find(skipped.begin(), skipped.end(), dir) != skipped.end()) continue;
    const auto candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

Error replace_process(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& environment) {
  if (argv.empty()) return make_error(ErrorKind::usage, "no command to run");
  std::string program = argv[0];
  if (program.find('/') == std::string::npos) {
    const auto path = environment.find("PATH");
    auto found = find_in_path(program, path == environment.end() ? "" : path->second);
    if (!found)
      return make_error(ErrorKind::not_found, program + ": command not found on PATH",
                        "check the name, or give the program's full path");
    program = *found;
  }
  std::vector<std::string> entries;
  for (const auto& [name, value] : environment) entries.push_back(name + "=" + value);
  std::vector<char*> child_argv, child_env;
  for (const auto& arg : argv) child_argv.push_back(const_cast<char*>(arg.c_str()));
  child_argv.push_back(nullptr);
  for (auto& entry : entries) child_env.push_back(entry.data());
  child_env.push_back(nullptr);
  ::execve(program.c_str(), child_argv.data(), child_env.data());
  const int error = errno;
  return make_error(error == ENOENT ? ErrorKind::not_found : ErrorKind::failure,
                    "cannot run " + program + ": " + std::strerror(error));
}

}  // namespace cudaenv
