#include <doctest/doctest.h>

#include "core/process.hpp"

using namespace cudaenv;

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

TEST_CASE("a hung child is killed at its timeout") {
  SystemProcessRunner runner;
  auto result = runner.run({{"/bin/sleep", "30"}, std::nullopt, std::chrono::milliseconds(200)});
  REQUIRE(result.ok());
  CHECK(result->timed_out);
  CHECK(result->exit_code == 128 + 9);
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
