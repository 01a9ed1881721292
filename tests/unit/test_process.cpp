#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <sys/wait.h>

#include "core/process.hpp"

using namespace cudaenv;

namespace {

using Clock = std::chrono::steady_clock;

// Gone, or a zombie waiting for init to reap it: either way it runs no more and holds nothing.
bool process_gone(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto after_name = line.rfind(')');
  return after_name != std::string::npos && line.substr(after_name + 2, 1) == "Z";
}

bool gone_within(const std::string& pid, std::chrono::seconds limit) {
  const auto until = Clock::now() + limit;
  while (!process_gone(pid)) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Restores a signal's disposition when the test ends.
struct SignalRestored {
  int signal;
  struct sigaction saved {};
  explicit SignalRestored(int which) : signal(which) { ::sigaction(signal, nullptr, &saved); }
  ~SignalRestored() { ::sigaction(signal, &saved, nullptr); }
};

}  // namespace

TEST_CASE("a child's output, error output and exit status are captured") {
  SystemProcessRunner runner;
  auto result = runner.run({{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"},
                            std::nullopt,
                            std::chrono::milliseconds(5000)});
  REQUIRE(result.ok());
  CHECK(result->out == "out\n");
  CHECK(result->err == "err\n");
  CHECK(result->exit_code == 3);
  CHECK_FALSE(result->succeeded());
}

TEST_CASE("the child sees exactly the environment it is given") {
  SystemProcessRunner runner;
  std::map<std::string, std::string> env{{"ONLY", "this"}};
  auto result = runner.run({{"/usr/bin/env"}, env, std::chrono::milliseconds(5000)});
  REQUIRE(result.ok());
  CHECK(result->out == "ONLY=this\n");
}

TEST_CASE("a hung child is stopped with SIGTERM at its timeout") {
  SystemProcessRunner runner;
  auto result = runner.run({{"/bin/sleep", "30"}, std::nullopt, std::chrono::milliseconds(200)});
  REQUIRE(result.ok());
  CHECK(result->timed_out);
  CHECK(result->exit_code == 128 + SIGTERM);
}

TEST_CASE("a timeout stops everything the child started, even what ignores SIGTERM") {
  // The child prints its own pid and a grandchild's, which ignores SIGTERM and keeps the output
  // pipes open; then the child sleeps too. Only signalling the whole group reaches both.
  SystemProcessRunner runner;
  const auto started = Clock::now();
  auto result =
      runner.run({{"/bin/sh", "-c", "(trap '' TERM; exec sleep 300) & echo $$ $!; exec sleep 300"},
                  std::nullopt,
                  std::chrono::milliseconds(500)});
  REQUIRE(result.ok());
  CHECK(Clock::now() - started < std::chrono::seconds(60));  // did not wait for the sleeps
  CHECK(result->timed_out);
  std::istringstream pids(result->out);
  std::string child, grandchild;
  pids >> child >> grandchild;
  REQUIRE_FALSE(grandchild.empty());
  CHECK(gone_within(child, std::chrono::seconds(30)));
  CHECK(gone_within(grandchild, std::chrono::seconds(30)));
}

TEST_CASE("a grandchild holding the pipes after the child exited is stopped at the timeout") {
  SystemProcessRunner runner;
  const auto started = Clock::now();
  auto result = runner.run(
      {{"/bin/sh", "-c", "sleep 300 & echo $!"}, std::nullopt, std::chrono::milliseconds(500)});
  REQUIRE(result.ok());
  CHECK(Clock::now() - started < std::chrono::seconds(60));
  CHECK(result->timed_out);
  CHECK(result->exit_code == 0);  // the child itself had finished
  const auto grandchild = result->out.substr(0, result->out.find('\n'));
  REQUIRE_FALSE(grandchild.empty());
  CHECK(gone_within(grandchild, std::chrono::seconds(30)));
}

TEST_CASE("each child leads a process group of its own, an interactive one shares ours") {
  SystemProcessRunner runner;
  // Field 5 of /proc/PID/stat is the process group; the shell's name holds no space.
  const std::vector<std::string> argv{"/bin/sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"};
  auto own = runner.run({argv, std::nullopt, std::chrono::milliseconds(5000)});
  REQUIRE(own.ok());
  std::istringstream own_ids(own->out);
  std::string pid, group;
  own_ids >> pid >> group;
  CHECK(group == pid);

  auto shared = runner.run({argv, std::nullopt, std::chrono::milliseconds(5000), "", true});
  REQUIRE(shared.ok());
  std::istringstream shared_ids(shared->out);
  shared_ids >> pid >> group;
  CHECK(group == std::to_string(::getpgrp()));
}

TEST_CASE("a child that never reads a large input cannot block us") {
  SystemProcessRunner runner;
  const auto started = Clock::now();
  auto result = runner.run({{"/bin/sleep", "120"},
                            std::nullopt,
                            std::chrono::milliseconds(1000),
                            std::string(1 << 20, 'x')});
  REQUIRE(result.ok());
  CHECK(Clock::now() - started < std::chrono::seconds(60));
  CHECK(result->timed_out);
}

TEST_CASE("input is written while the output is read, so neither side waits on the other") {
  // The child writes a megabyte before it reads anything: written whole first, the input would
  // fill its pipe while the child's output fills ours, and both would wait for ever.
  SystemProcessRunner runner;
  const std::string input(1 << 20, 'x');
  auto result = runner.run({{"/bin/sh", "-c", "head -c 1000000 /dev/zero; wc -c"},
                            std::nullopt,
                            std::chrono::milliseconds(60000),
                            input});
  REQUIRE(result.ok());
  CHECK_FALSE(result->timed_out);
  CHECK(result->exit_code == 0);
  REQUIRE(result->out.size() > 1000000);
  CHECK(result->out.substr(1000000) == std::to_string(input.size()) + "\n");
}

TEST_CASE("input over the limit is refused with an error naming the command and the limit") {
  SystemProcessRunner runner;
  auto result = runner.run({{"/bin/cat"},
                            std::nullopt,
                            std::chrono::milliseconds(5000),
                            std::string(max_process_input + 1, 'x')});
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message.find("/bin/cat") != std::string::npos);
  CHECK(result.error().message.find("4 MiB") != std::string::npos);
}

TEST_CASE("writing to a child that has exited does not kill us with SIGPIPE") {
  // SIGPIPE at its default (deadly) disposition: the runner must not depend on the program
  // having ignored it.
  const SignalRestored restore(SIGPIPE);
  ::signal(SIGPIPE, SIG_DFL);
  SystemProcessRunner runner;
  auto result = runner.run({{"/bin/sh", "-c", "exec 0<&-; sleep 0.2; exit 5"},
                            std::nullopt,
                            std::chrono::milliseconds(30000),
                            std::string(1 << 20, 'x')});
  REQUIRE(result.ok());  // still here
  CHECK(result->exit_code == 5);
  CHECK_FALSE(result->timed_out);
  sigset_t pending;
  sigpending(&pending);
  CHECK(sigismember(&pending, SIGPIPE) == 0);  // nothing left to deliver later either
}

TEST_CASE("children get SIGPIPE's default back when the program ignores it") {
  const SignalRestored restore(SIGPIPE);
  ignore_broken_pipe_signal();
  SystemProcessRunner runner;
  auto result = runner.run({{"/bin/grep", "SigIgn", "/proc/self/status"},
                            std::nullopt,
                            std::chrono::milliseconds(5000)});
  REQUIRE(result.ok());
  const auto mask = std::stoull(result->out.substr(result->out.find(':') + 1), nullptr, 16);
  CHECK((mask & (1ULL << (SIGPIPE - 1))) == 0);
}

TEST_CASE("a missing program is an error naming it") {
  SystemProcessRunner runner;
  auto result = runner.run({{"/nonexistent/tool"}, std::nullopt, std::chrono::milliseconds(1000)});
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message.find("/nonexistent/tool") != std::string::npos);
}

TEST_CASE("large outputs on both streams do not deadlock") {
  SystemProcessRunner runner;
  auto result =
      runner.run({{"/bin/sh", "-c", "head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2"},
                  std::nullopt,
                  std::chrono::milliseconds(5000)});
  REQUIRE(result.ok());
  CHECK(result->out.size() == 300000);
  CHECK(result->err.size() == 300000);
}

TEST_CASE("terminate_running_children stops a child's whole group, as a Ctrl-C handler needs") {
  SystemProcessRunner runner;
  const auto started = Clock::now();
  auto running = std::async(std::launch::async, [&runner] {
    return runner.run({{"/bin/sh", "-c", "sleep 120 & exec sleep 120"},
                       std::nullopt,
                       std::chrono::milliseconds(120000)});
  });
  // The child may not be listed yet on the first calls: repeat until the run ends.
  while (running.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready &&
         Clock::now() - started < std::chrono::seconds(60)) {
    terminate_running_children();
  }
  REQUIRE(running.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  auto result = running.get();
  REQUIRE(result.ok());
  CHECK_FALSE(result->timed_out);
  CHECK(result->exit_code == 128 + SIGTERM);
}

TEST_CASE("Ctrl-C stops the running children too, then ends the program as SIGINT would") {
  const auto pid_file =
      std::filesystem::temp_directory_path() / ("cudaenv-interrupt-" + std::to_string(::getpid()));
  std::filesystem::remove(pid_file);
  const pid_t program = ::fork();
  REQUIRE(program >= 0);
  if (program == 0) {  // the program: its child leads a group of its own, out of Ctrl-C's reach
    stop_children_on_interrupt();
    SystemProcessRunner runner;
    (void)runner.run({{"/bin/sh", "-c", "echo $$ > '" + pid_file.string() + "'; exec sleep 120"},
                      std::nullopt,
                      std::chrono::milliseconds(120000)});
    ::_exit(0);
  }
  std::string child;
  const auto until = Clock::now() + std::chrono::seconds(60);
  while (child.empty() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream(pid_file) >> child;
  }
  REQUIRE_FALSE(child.empty());
  ::kill(program, SIGINT);
  int status = 0;
  REQUIRE(::waitpid(program, &status, 0) == program);
  std::filesystem::remove(pid_file);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(gone_within(child, std::chrono::seconds(30)));
}
