#include "core/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>

#include <sys/wait.h>

#include "core/fd.hpp"
#include "core/files.hpp"
#include "core/text.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in any header

namespace cudaenv {

namespace {

using Clock = std::chrono::steady_clock;

// How long a timed-out child's process group has after SIGTERM before SIGKILL.
constexpr auto termination_grace = std::chrono::milliseconds(1000);

// The process groups of the children being waited on, for terminate_running_children. Atomics of
// a lock-free type, so a signal handler may read them; a full table only loses that courtesy.
std::array<std::atomic<pid_t>, 64> running_groups{};
static_assert(std::atomic<pid_t>::is_always_lock_free);

// Lists a child's group in running_groups while alive; taken off before the child is reaped, so
// the group id is never signalled after it could have been reused.
class RunningGroup {
 public:
  explicit RunningGroup(pid_t group) {
    for (auto& slot : running_groups) {
      pid_t empty = 0;
      if (slot.compare_exchange_strong(empty, group)) {
        slot_ = &slot;
        return;
      }
    }
  }
  RunningGroup(const RunningGroup&) = delete;
  RunningGroup& operator=(const RunningGroup&) = delete;
  ~RunningGroup() {
    if (slot_ != nullptr) slot_->store(0);
  }

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

// Both ends owned, so no descriptor leaks on an early return.
struct Pipe {
  int fds[2] = {-1, -1};
  UniqueFd ends[2];
  bool open() {
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    ends[0] = UniqueFd(fds[0]);
    ends[1] = UniqueFd(fds[1]);
    return true;
  }
  void close_end(int which) {
    ends[which] = UniqueFd();
    fds[which] = -1;
  }
};

// posix_spawn's file actions and attributes, released on scope exit.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attributes{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
};

sigset_t only_sigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

// Blocks SIGPIPE in this thread while alive. A SIGPIPE our own writes raised is taken off the
// pending set before the mask is restored, so it is never delivered; the process-wide disposition
// is not touched, so other threads are unaffected.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    const sigset_t pipe_only = only_sigpipe();
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous_);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;
  ~SigpipeBlocked() {
    if (!already_pending_) {
      const sigset_t pipe_only = only_sigpipe();
      const timespec no_wait{};
      while (sigtimedwait(&pipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  sigset_t previous_{};
  bool already_pending_ = false;
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

// Writes what the child's standard input takes now (the descriptor is non-blocking); closes it
// once everything is written or the child has closed its end.
void feed_input(Pipe& in, std::string_view& pending) {
  const ssize_t n = ::write(in.fds[1], pending.data(), std::min<size_t>(pending.size(), 65536));
  if (n > 0) pending.remove_prefix(static_cast<size_t>(n));
  const bool failed = n < 0 && errno != EINTR && errno != EAGAIN;
  if (failed || pending.empty()) in.close_end(1);
}

// Appends what a ready pipe holds to `sink`; closes it at end of file or on error.
void read_output(Pipe& pipe, std::string& sink) {
  char buffer[65536];
  const ssize_t n = ::read(pipe.fds[0], buffer, sizeof buffer);
  if (n > 0) {
    sink.append(buffer, static_cast<size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    pipe.close_end(0);
  }
}

// Writes the input and reads both outputs, all through one poll, until the outputs close (true)
// or the deadline passes (false).
bool exchange(Pipe& in, Pipe& out, Pipe& err, std::string_view input, ProcessResult& result,
              Clock::time_point deadline) {
  const SigpipeBlocked no_sigpipe;
  while (out.fds[0] >= 0 || err.fds[0] >= 0) {
    // poll skips negative descriptors: a closed pipe simply drops out.
    std::array<pollfd, 3> fds{pollfd{in.fds[1], POLLOUT, 0}, pollfd{out.fds[0], POLLIN, 0},
                              pollfd{err.fds[0], POLLIN, 0}};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    if (fds[0].revents != 0) feed_input(in, input);
    if (fds[1].revents != 0) read_output(out, result.out);
    if (fds[2].revents != 0) read_output(err, result.err);
  }
  return true;
}

// Waits until the child has exited or the deadline passes, without reaping it: while it is an
// unreaped zombie its process group id cannot be reused, so signalling the group stays safe.
bool exited_by(pid_t pid, Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    siginfo_t info{};
    const int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == pid) return true;
    if (rc < 0 && errno != EINTR) return true;  // nothing to wait for
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(20));
  }
}

// SIGTERM, a short grace, then SIGKILL: to the child's whole group, so nothing it started (and
// that might hold its pipes) outlives the timeout; to the child alone when it shares our group.
void terminate(pid_t pid, bool whole_group) {
  const pid_t target = whole_group ? -pid : pid;
  ::kill(target, SIGTERM);
  exited_by(pid, Clock::now() + termination_grace);
  ::kill(target, SIGKILL);
}

// File actions and attributes: standard streams on our pipes, a fresh signal state, and (unless
// interactive) a process group of its own.
void prepare_spawn(SpawnSetup& setup, const Command& command, Pipe& in, Pipe& out, Pipe& err) {
  if (command.input.empty()) {
    posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&setup.actions, in.fds[0], 0);
  }
  posix_spawn_file_actions_adddup2(&setup.actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&setup.actions, err.fds[1], 2);

  // The child starts with no signal blocked and SIGPIPE at its default, whatever this program
  // set for itself (ignore_broken_pipe_signal, SigpipeBlocked in another thread).
  const sigset_t pipe_only = only_sigpipe();
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&setup.attributes, &pipe_only);
  posix_spawnattr_setsigmask(&setup.attributes, &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (!command.interactive) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&setup.attributes, 0);  // 0: a new group led by the child
  }
  posix_spawnattr_setflags(&setup.attributes, flags);
}

Result<pid_t> spawn(const Command& command, Pipe& in, Pipe& out, Pipe& err) {
  SpawnSetup setup;
  prepare_spawn(setup, command, in, out, err);
  std::vector<std::string> argv_storage = command.argv;
  auto argv = c_strings(argv_storage);
  std::vector<std::string> env_storage;
  if (command.environment) {
    for (const auto& [name, value] : *command.environment)
      env_storage.push_back(name + "=" + value);
  }
  auto envp = c_strings(env_storage);
  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, argv[0], &setup.actions, &setup.attributes,
                                         argv.data(), command.environment ? envp.data() : environ);
  if (spawn_error != 0) {
    return make_error(ErrorKind::failure,
                      "cannot run " + command.argv[0] + ": " + std::strerror(spawn_error));
  }
  return pid;
}

Status check_command(const Command& command) {
  if (command.argv.empty()) return make_error(ErrorKind::failure, "empty command line");
  if (command.input.size() > max_process_input) {
    return make_error(ErrorKind::failure,
                      "input for " + command.argv[0] + " is " +
                          std::to_string(command.input.size()) + " bytes, more than the " +
                          std::to_string(max_process_input >> 20) + " MiB a command may be given",
                      "pass large data through a file instead of standard input");
  }
  return Ok{};
}

}  // namespace

Result<ProcessResult> SystemProcessRunner::run(const Command& command) {
  if (auto valid = check_command(command); !valid.ok()) return valid.error();
  Pipe in, out, err;
  if (!out.open() || !err.open() || (!command.input.empty() && !in.open())) {
    return make_error(ErrorKind::failure,
                      std::string("cannot create pipe: ") + std::strerror(errno));
  }
  if (in.fds[1] >= 0) ::fcntl(in.fds[1], F_SETFL, O_NONBLOCK);
  auto pid = spawn(command, in, out, err);
  if (!pid.ok()) return pid.error();
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);

  ProcessResult result;
  {
    std::optional<RunningGroup> listed;
    if (!command.interactive) listed.emplace(*pid);
    const auto deadline = Clock::now() + command.timeout;
    const bool finished =
        exchange(in, out, err, command.input, result, deadline) && exited_by(*pid, deadline);
    if (!finished) {
      result.timed_out = true;
      terminate(*pid, !command.interactive);
    }
  }
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = decode_wait_status(status);
  return result;
}

void terminate_running_children() noexcept {
  for (const auto& slot : running_groups) {
    const pid_t group = slot.load();
    if (group > 0) ::kill(-group, SIGTERM);
  }
}

void ignore_broken_pipe_signal() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

namespace {

extern "C" void stop_children_then_die(int signal) {
  terminate_running_children();
  ::signal(signal, SIG_DFL);  // async-signal-safe; then die of the signal as before
  ::raise(signal);
}

}  // namespace

void stop_children_on_interrupt() {
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction previous {};
    ::sigaction(signal, nullptr, &previous);
    if (previous.sa_handler == SIG_IGN) continue;  // a job started with the signal ignored
    struct sigaction action {};
    action.sa_handler = stop_children_then_die;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal, &action, nullptr);
  }
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
  // An ignored signal stays ignored across exec: the program gets SIGPIPE's default back.
  struct sigaction default_pipe {};
  struct sigaction previous {};
  default_pipe.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &default_pipe, &previous);
  ::execve(program.c_str(), child_argv.data(), child_env.data());
  const int error = errno;
  ::sigaction(SIGPIPE, &previous, nullptr);
  return make_error(error == ENOENT ? ErrorKind::not_found : ErrorKind::failure,
                    "cannot run " + program + ": " + std::strerror(error));
}

}  // namespace cudaenv
