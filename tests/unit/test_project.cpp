// .cudaenv files and which version applies where.

#include <filesystem>

#include <doctest/doctest.h>

#include "project/project_file.hpp"
#include "project/selection.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::project;
using cudaenv::test::TempDir;
using cudaenv::test::write_file;
namespace fs = std::filesystem;

TEST_CASE(".cudaenv as TOML and as a bare version line") {
  auto toml = parse_project_file(
      "# team pin\ncuda = \"12.1\"\ncudnn = \"8.9\"\n[frameworks]\ntorch = \"2.3\"\n",
      "/r/.cudaenv");
  REQUIRE(toml.ok());
  CHECK(toml->cuda->str() == "12.1");
  CHECK(toml->cudnn->str() == "8.9");
  CHECK(toml->frameworks.at("torch").str() == "2.3");

  auto bare = parse_project_file("12.4.1\n", "/r/.cudaenv");
  REQUIRE(bare.ok());
  CHECK(bare->cuda->str() == "12.4.1");
  auto commented =
      parse_project_file("# pinned for the cluster\n  >=12.1,<12.5  # range\n", "/r/.cudaenv");
  REQUIRE(commented.ok());
  CHECK(commented->cuda->matches(*Version::parse("12.4.1")));
}

TEST_CASE("a malformed .cudaenv names the file, the line and the problem") {
  auto bad_spec = parse_project_file("\ncuda = \"twelve\"\n", "/repo/.cudaenv");
  REQUIRE_FALSE(bad_spec.ok());
  CHECK(bad_spec.error().message.rfind("/repo/.cudaenv:2: cuda:", 0) == 0);
  auto not_string = parse_project_file("cuda = 12.1\n", "/repo/.cudaenv");
  REQUIRE_FALSE(not_string.ok());
  CHECK(not_string.error().message.find("must be a quoted version") != std::string::npos);
  auto broken = parse_project_file("cuda = \"12.1\nx", "/repo/.cudaenv");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message.rfind("/repo/.cudaenv:1:", 0) == 0);
}

TEST_CASE("hostile content is data: shell syntax is just an invalid spec") {
  for (const char* hostile : {"$(touch /tmp/pwned)\n", "`id`\n", "cuda = \"12.1; rm -rf /\"\n",
                              "cuda = \"12.1\\\"\\necho hi\"\n"}) {
    CAPTURE(hostile);
    CHECK_FALSE(parse_project_file(hostile, "/r/.cudaenv").ok());
  }
}

TEST_CASE(
    "selection: CUDAENV_VERSION, then the nearest .cudaenv upward, then the config, then system") {
  TempDir dir;
  const auto repo = dir.path() / "repo";
  const auto nested = repo / "sub" / "deeper";
  fs::create_directories(nested);
  write_file(repo / ".cudaenv", "cuda = \"12.1\"\n");
  write_file(dir.path() / "config" / "cudaenv" / "config.toml", "cuda = \"11.8\"\n");
  Environment env(
      {{"HOME", dir.path().string()}, {"XDG_CONFIG_HOME", (dir.path() / "config").string()}});

  auto from_file = select(env, nested);
  REQUIRE(from_file.ok());
  CHECK(from_file->source == SelectionSource::project_file);
  CHECK(from_file->file == repo / ".cudaenv");
  CHECK(from_file->cuda->str() == "12.1");

  auto from_config = select(env, dir.path());
  REQUIRE(from_config.ok());
  CHECK(from_config->source == SelectionSource::global_config);
  CHECK(from_config->cuda->str() == "11.8");

  env.set("CUDAENV_VERSION", "13.0");
  auto forced = select(env, nested);
  REQUIRE(forced.ok());
  CHECK(forced->source == SelectionSource::environment);
  CHECK(forced->cuda->str() == "13.0");

  env.set("CUDAENV_VERSION", "system");
  CHECK(select(env, nested)->source == SelectionSource::system);
  CHECK_FALSE(select(env, nested)->cuda.has_value());
}

TEST_CASE("selection picks the newest installed toolkit matching the spec") {
  TempDir dir;
  for (const char* version : {"12.1.0", "12.1.1", "12.4.1"})
    fs::create_directories(dir.path() / "toolkits" / version);
  const install::Store store{dir.path()};
  Selection selection;
  selection.cuda = VersionSpec::parse("12.1").value();
  REQUIRE(installed_match(selection, store).has_value());
  CHECK(installed_match(selection, store)->version.str() == "12.1.1");
  selection.cuda = VersionSpec::parse("11.8").value();
  CHECK_FALSE(installed_match(selection, store).has_value());
}
