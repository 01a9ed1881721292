// .cudaenv files and which version applies where.

#include <filesystem>

#include <doctest/doctest.h>

#include "project/config.hpp"
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

TEST_CASE("a malformed .cudaenv or config is a usage error (exit 2)") {
  auto bad = parse_project_file("cuda = [\n", "/repo/.cudaenv");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::usage);
  auto config = parse_config("[download]\njobs = \"eight\"\n", "/home/u/config.toml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().kind == ErrorKind::usage);
  CHECK(config.error().message == "/home/u/config.toml:2: download.jobs must be an integer");
}

// toml++ 3.3 reaches __builtin_unreachable() when it asks whether some non-ASCII characters are
// whitespace (found by fuzz/fuzz_project_file); text holding one is refused before it sees it.
TEST_CASE("characters the TOML reader mishandles and text that is not UTF-8 are refused") {
  for (const std::string text : {"cuda = \"12.1\"\n\xcf\x9b\n", "cuda = \"12.1\"\n# \xcf\x9b\n",
                                 "cuda = \"12.1\"\nx = \"f\xc3\xbcr\"\n",
                                 "cuda = \"12.1\"\nc999=98B9'''99:00Z9\xc7\x9ch]]]#\n"}) {
    CAPTURE(text);
    auto file = parse_project_file(text, "/repo/.cudaenv");
    REQUIRE_FALSE(file.ok());
    CHECK(file.error().kind == ErrorKind::usage);
    CHECK(file.error().message.rfind("/repo/.cudaenv:2: character U+", 0) == 0);
    auto config = parse_config(text, "/home/u/config.toml");
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().message.rfind("/home/u/config.toml:2: character U+", 0) == 0);
  }
  auto not_utf8 = parse_project_file("cuda = \"12.1\"\n\n# \xff\n", "/repo/.cudaenv");
  REQUIRE_FALSE(not_utf8.ok());
  CHECK(not_utf8.error().message == "/repo/.cudaenv:3: not valid UTF-8");
  // Other non-ASCII text (here U+2026 and U+4E2D in a comment and a string) is read as before.
  auto fine = parse_project_file("# \xe2\x80\xa6\ncuda = \"12.1\"\nnote = \"\xe4\xb8\xad\"\n",
                                 "/repo/.cudaenv");
  REQUIRE_MESSAGE(fine.ok(), (fine.ok() ? "" : fine.error().message));
  CHECK(fine->cuda->str() == "12.1");
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
