#include <doctest/doctest.h>

#include "activate/toolkit_env.hpp"

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
