#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "activate/host_compiler.hpp"
#include "activate/toolkit_env.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using activate::prepend_entry;

TEST_CASE("a toolkit's environment names its prefix everywhere the tools look") {
  const Environment current({{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}});
  const auto env = activate::toolkit_environment(current, {"/opt/cuda-12.4", "12.4.1"});
  CHECK(env.get("CUDA_HOME") == "/opt/cuda-12.4");
  CHECK(env.get("CUDA_PATH") == "/opt/cuda-12.4");
  CHECK(env.get("CUDAToolkit_ROOT") == "/opt/cuda-12.4");
  CHECK(env.get("CUDACXX") == "/opt/cuda-12.4/bin/nvcc");
  CHECK(env.get("CUDAENV_ACTIVE") == "12.4.1");
  CHECK(env.get("PATH") == "/opt/cuda-12.4/bin:/usr/bin:/bin");
  CHECK(env.get("HOME") == "/home/u");
}

TEST_CASE("an unset LD_LIBRARY_PATH becomes just the toolkit's lib64, with no stray colon") {
  // A trailing ':' would add the current directory to the loader's search path.
  const auto env = activate::toolkit_environment(Environment(), {"/opt/cuda", "13.0.2"});
  CHECK(env.get("LD_LIBRARY_PATH") == "/opt/cuda/lib64");
  CHECK(env.get("PATH") == "/opt/cuda/bin");
}

TEST_CASE("an entry already on the list moves to the front instead of stacking") {
  CHECK(prepend_entry("/usr/bin:/opt/cuda/bin:/bin", "/opt/cuda/bin") ==
        "/opt/cuda/bin:/usr/bin:/bin");
  CHECK(prepend_entry("/opt/cuda/bin/:/usr/bin:/opt/cuda/bin", "/opt/cuda/bin") ==
        "/opt/cuda/bin:/usr/bin");
  CHECK(prepend_entry("/opt/cuda/bin", "/opt/cuda/bin") == "/opt/cuda/bin");
}

TEST_CASE("empty entries keep their place: they mean the current directory to the user") {
  CHECK(prepend_entry("/usr/bin::/bin", "/opt/cuda/bin") == "/opt/cuda/bin:/usr/bin::/bin");
  CHECK(prepend_entry(":/usr/lib", "/opt/cuda/lib64") == "/opt/cuda/lib64::/usr/lib");
}

TEST_CASE("switching from one cudaenv toolkit to another removes the first one's directories") {
  const Environment current({{"CUDAENV_ACTIVE", "12.1.1"},
                             {"CUDA_HOME", "/data/toolkits/12.1.1"},
                             {"PATH", "/data/toolkits/12.1.1/bin:/usr/bin"},
                             {"LD_LIBRARY_PATH", "/data/toolkits/12.1.1/lib64:/usr/lib/mpi"}});
  const auto env = activate::toolkit_environment(current, {"/data/toolkits/12.4.1", "12.4.1"});
  CHECK(env.get("PATH") == "/data/toolkits/12.4.1/bin:/usr/bin");
  CHECK(env.get("LD_LIBRARY_PATH") == "/data/toolkits/12.4.1/lib64:/usr/lib/mpi");
  CHECK(env.get("CUDAENV_ACTIVE") == "12.4.1");
}

TEST_CASE("a CUDA_HOME the user set by hand is not taken for cudaenv's and its PATH entry stays") {
  const Environment current(
      {{"CUDA_HOME", "/usr/local/cuda-11.8"}, {"PATH", "/usr/local/cuda-11.8/bin:/usr/bin"}});
  const auto env = activate::toolkit_environment(current, {"/usr/local/cuda-13.0", "13.0.2"});
  CHECK(env.get("PATH") == "/usr/local/cuda-13.0/bin:/usr/local/cuda-11.8/bin:/usr/bin");
  CHECK(env.get("CUDA_HOME") == "/usr/local/cuda-13.0");
}

TEST_CASE("toolkit_variables lists only what it changes") {
  const Environment current({{"PATH", "/usr/bin"}, {"TERM", "xterm"}});
  const auto variables = activate::toolkit_variables(current, {"/opt/cuda", "13.0.2"});
  CHECK(variables.size() == 7);
  CHECK(variables.count("TERM") == 0);
}

namespace {

namespace fs = std::filesystem;

void write_executable(const fs::path& path) {
  std::ofstream(path) << "#!/bin/sh\n";
  fs::permissions(path, fs::perms::owner_all);
}

// A toolkit whose host_config.h accepts GCC up to `newest`, and a bin/ with g++-11 … g++-13 and
// a `c++` that leads to `default_compiler` through a link, as Debian's alternatives do.
struct HostCompilerMachine {
  test::TempDir dir;
  fs::path prefix = dir.path() / "toolkit";
  fs::path bin = dir.path() / "bin";
  HostCompilerMachine(int newest, const std::string& default_compiler) {
    fs::create_directories(prefix / "include" / "crt");
    std::ofstream(prefix / "include" / "crt" / "host_config.h")
        << "#if defined(__GNUC__)\n#if __GNUC__ > " << newest << "\n#error unsupported\n#endif\n";
    fs::create_directories(bin);
    for (const char* name : {"g++-11", "g++-12", "g++-13"}) write_executable(bin / name);
    fs::create_symlink(bin / default_compiler, bin / "c++");
  }
  Environment env() const {
    return Environment(std::map<std::string, std::string>{{"PATH", bin.string() + ":/usr/bin"}});
  }
};

}  // namespace

TEST_CASE("a GCC's major version is read from its driver's file name") {
  CHECK(activate::gcc_major_in_name("g++-13") == 13);
  CHECK(activate::gcc_major_in_name("x86_64-linux-gnu-g++-12") == 12);
  CHECK_FALSE(activate::gcc_major_in_name("g++"));
  CHECK_FALSE(activate::gcc_major_in_name("clang++-18"));
  CHECK_FALSE(activate::gcc_major_in_name("g++-13.bak"));
}

TEST_CASE("CUDAHOSTCXX names the newest accepted g++ only when the default one is too new") {
  HostCompilerMachine too_new(12, "g++-13");
  CHECK(activate::newest_supported_gcc(too_new.prefix.string()) == 12);
  const auto env =
      activate::toolkit_environment(too_new.env(), {too_new.prefix.string(), "12.1.1"});
  CHECK(env.get("CUDAHOSTCXX") == (too_new.bin / "g++-12").string());

  HostCompilerMachine fine(13, "g++-13");
  CHECK_FALSE(activate::toolkit_environment(fine.env(), {fine.prefix.string(), "12.4.1"})
                  .get("CUDAHOSTCXX"));
}

TEST_CASE("the user's CUDAHOSTCXX stands, and no compiler comes from a relative PATH entry") {
  HostCompilerMachine machine(12, "g++-13");
  auto own = machine.env();
  own.set("CUDAHOSTCXX", "/opt/my/g++");
  CHECK(
      activate::toolkit_environment(own, {machine.prefix.string(), "12.1.1"}).get("CUDAHOSTCXX") ==
      "/opt/my/g++");
  // No header: nothing is known about the range, nothing is set.
  CHECK_FALSE(
      activate::needed_host_compiler(machine.env(), (machine.dir.path() / "none").string()));
  const auto relative = fs::relative(machine.bin, fs::current_path());
  CHECK_FALSE(activate::needed_host_compiler(
      Environment(std::map<std::string, std::string>{{"PATH", relative.string()}}),
      machine.prefix.string()));
}
