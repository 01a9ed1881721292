#include <filesystem>

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "core/files.hpp"
#include "core/sysroot.hpp"
#include "test_util.hpp"

using cudaenv::Sysroot;
using cudaenv::test::TempDir;
using cudaenv::test::write_file;
namespace fs = std::filesystem;

TEST_CASE("machine paths map below the root and back") {
  TempDir dir;
  const Sysroot root(dir.path());
  CHECK(root.host_path("/proc/modules") == dir.path() / "proc/modules");
  CHECK(root.machine_path(dir.path() / "usr/local/cuda") == "/usr/local/cuda");
  const Sysroot host;
  CHECK(host.host_path("/proc/modules") == "/proc/modules");
}

TEST_CASE("files are read through the root") {
  TempDir dir;
  write_file(dir.path() / "etc/os-release", "ID=debian\n");
  const Sysroot root(dir.path());
  CHECK(root.read_file("/etc/os-release") == "ID=debian\n");
  CHECK_FALSE(root.read_file("/etc/missing").has_value());
  CHECK(root.list_directory("/etc") == std::vector<std::string>{"os-release"});
  CHECK(root.list_directory("/nowhere").empty());
}

TEST_CASE("an update-alternatives chain is followed hop by hop inside the root") {
  TempDir dir;
  fs::create_directories(dir.path() / "usr/local/cuda-11.8/bin");
  fs::create_directories(dir.path() / "etc/alternatives");
  fs::create_symlink("/etc/alternatives/cuda", dir.path() / "usr/local/cuda");
  fs::create_symlink("/usr/local/cuda-11.8", dir.path() / "etc/alternatives/cuda");
  const Sysroot root(dir.path());
  const auto chain = root.resolve("/usr/local/cuda");
  CHECK(chain.exists);
  CHECK(chain.target == "/usr/local/cuda-11.8");
  CHECK(chain.hops == std::vector<std::string>{"/usr/local/cuda", "/etc/alternatives/cuda",
                                               "/usr/local/cuda-11.8"});
  CHECK(root.is_directory("/usr/local/cuda/bin"));
}

TEST_CASE("relative links, links in the middle of a path, and dangling links") {
  TempDir dir;
  fs::create_directories(dir.path() / "usr/local/cuda-12.4/bin");
  fs::create_symlink("cuda-12.4", dir.path() / "usr/local/cuda");
  fs::create_symlink("../../usr/local/cuda-10.2", dir.path() / "usr/local/gone");
  const Sysroot root(dir.path());
  CHECK(root.canonical("/usr/local/cuda/bin") == "/usr/local/cuda-12.4/bin");
  const auto dangling = root.resolve("/usr/local/gone");
  CHECK_FALSE(dangling.exists);
  CHECK(dangling.hops.back() == "/usr/local/cuda-10.2");
}

TEST_CASE("absolute links cannot escape the root, and loops end") {
  TempDir dir;
  fs::create_directories(dir.path() / "usr");
  fs::create_symlink("/etc", dir.path() / "usr/escape");  // host /etc, which exists
  fs::create_symlink("loop-b", dir.path() / "usr/loop-a");
  fs::create_symlink("loop-a", dir.path() / "usr/loop-b");
  const Sysroot root(dir.path());
  CHECK_FALSE(root.exists("/usr/escape"));  // re-rooted: <root>/etc does not exist
  CHECK_FALSE(root.exists("/usr/loop-a"));
  CHECK_FALSE(root.read_file("/usr/escape/hostname").has_value());
}

TEST_CASE("bounded reads: a kernel-sized file, nothing longer, never a FIFO") {
  TempDir dir;
  write_file(dir.path() / "proc/driver/nvidia/version", "NVRM version: ... 580.95.05\n");
  write_file(dir.path() / "sys/module/nvidia/version", std::string(5000, '5'));
  const Sysroot root(dir.path());
  CHECK(root.read_bounded("/proc/driver/nvidia/version", 4096) == "NVRM version: ... 580.95.05\n");
  CHECK_FALSE(root.read_bounded("/sys/module/nvidia/version", 4096).has_value());
  CHECK(root.read_bounded("/sys/module/nvidia/version", 5000)->size() == 5000);
  CHECK_FALSE(root.read_bounded("/proc/driver/nvidia/absent", 4096).has_value());
  // A FIFO with no writer: opening it blocking would wait forever.
  const auto fifo = dir.path() / "proc/driver/nvidia/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(root.read_bounded("/proc/driver/nvidia/fifo", 4096).has_value());
  const auto error = cudaenv::read_bounded_file(fifo, 4096);
  REQUIRE_FALSE(error);
  CHECK(error.error().message == fifo.string() + ": not a regular file (a FIFO)");
  // The real /proc answers through the same call (its files say they are empty).
  CHECK(Sysroot().read_bounded("/proc/self/stat", 4096).has_value());
}
