#include "test_util.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include <doctest/doctest.h>

#include "core/accounts.hpp"
#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "manifest/load.hpp"

namespace cudaenv::test {

const manifest::Database& embedded_database() {
  static const manifest::Database database =
      std::move(manifest::load_database(manifest::embedded_manifests())).value();
  return database;
}

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "cudaenv-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

namespace {

bool is_driver_placeholder(const fs::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  return first == "FAKE_NVIDIA_DRIVER";
}

}  // namespace

FixtureMachine::FixtureMachine(const std::string& name) {
  const fs::path source = fs::path(CUDAENV_FIXTURES_DIR) / "machines" / name;
  REQUIRE_MESSAGE(fs::is_directory(source), "no fixture machine " << source);
  fs::copy(source, root(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  for (const auto& entry : fs::recursive_directory_iterator(root())) {
    if (entry.is_regular_file() && !entry.is_symlink() && is_driver_placeholder(entry.path())) {
      fs::copy_file(CUDAENV_FAKE_DRIVER, entry.path(), fs::copy_options::overwrite_existing);
    }
  }
}

}  // namespace cudaenv::test

// The shared core helpers these fixtures rest on: terminal-safe text, the home directory, and
// the ownership rule for data roots and configs.
namespace cudaenv {

namespace fs = std::filesystem;

TEST_CASE("printable escapes every control a terminal acts on and keeps valid UTF-8") {
  CHECK(text::printable("12.4.1") == "12.4.1");
  CHECK(text::printable("\x1b]0;pwned\x07\x1b[2J") == "\\x1b]0;pwned\\x07\\x1b[2J");
  CHECK(text::printable("a\nb\tc\rd\x7f") == "a\\nb\\tc\\rd\\x7f");
  CHECK(text::printable("a\nb", 200, text::LineBreaks::keep) == "a\nb");
  CHECK(text::printable("caf\xc3\xa9 \xe2\x80\xa6") == "caf\xc3\xa9 \xe2\x80\xa6");
  CHECK(text::printable("\xc2\x9b"
                        "31m") == "\\xc2\\x9b31m");  // U+009B, the C1 CSI
  CHECK(text::printable("\x9b"
                        "31m") == "\\x9b31m");                  // a raw C1 byte
  CHECK(text::printable("\xc0\xaf") == "\\xc0\\xaf");           // overlong: not UTF-8
  CHECK(text::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(text::printable("\xe2\x80") == "\\xe2\\x80");           // cut short
}

TEST_CASE("printable cuts long values at a character boundary and says how much it cut") {
  const std::string value(1000, 'A');
  CHECK(text::printable(value) == std::string(200, 'A') + "\xe2\x80\xa6[+800 bytes]");
  CHECK(text::printable(std::string(199, 'x') + "\xc3\xa9y")
            .ends_with("\xc3\xa9\xe2\x80\xa6[+1 bytes]"));
  CHECK(text::printable(value, 1000) == value);
}

TEST_CASE("the home directory never falls back to the working directory") {
  using Variables = std::map<std::string, std::string>;
  CHECK(paths::home_directory(Environment(Variables{{"HOME", "/home/x"}})) == "/home/x");
  for (const auto& env : {Environment(), Environment(Variables{{"HOME", ""}}),
                          Environment(Variables{{"HOME", "rel"}})}) {
    const auto home = paths::home_directory(env);
    CHECK(home.is_absolute());
    CHECK(paths::data_root(env).is_absolute());
    CHECK(paths::config_file(env).is_absolute());
  }
  CHECK(paths::data_root(Environment(Variables{{"HOME", "/h"}, {"XDG_DATA_HOME", "rel"}})) ==
        "/h/.local/share/cudaenv");
}

TEST_CASE("a data root others can write is refused, one of ours, or sticky and ours, is not") {
  test::TempDir dir;
  const auto root = dir.path() / "root";
  fs::create_directories(root / "toolkits");
  CHECK(ownership::check_data_root(root).ok());
  CHECK(ownership::check_data_root(dir.path() / "missing").ok());
  fs::permissions(root, fs::perms(0777));
  const auto refused = ownership::check_data_root(root);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "data root " + root.string() +
            " is writable by every user (mode 0777): a toolkit planted there would run as you");
  CHECK(text::contains(refused.error().hint, "chmod go-w " + root.string()));
  fs::permissions(root, fs::perms(01777));
  CHECK(ownership::check_data_root(root).ok());
  fs::permissions(root / "toolkits", fs::perms(0775));
  CHECK(text::contains(ownership::check_data_root(root).error().message,
                       "data root directory " + (root / "toolkits").string() +
                           " is writable by its group (mode 0775)"));
}

TEST_CASE("a toolkit prefix, its bin/ and each program in it must be writable by nobody else") {
  test::TempDir dir;
  const auto prefix = dir.path() / "12.4.1";
  test::write_file(prefix / "bin" / "nvcc", "#!/bin/sh\n");
  test::write_file(prefix / "nvvm" / "bin" / "cicc", "#!/bin/sh\n");
  fs::create_directories(prefix / "lib64");
  for (const auto& path :
       {prefix, prefix / "bin", prefix / "nvvm", prefix / "nvvm" / "bin", prefix / "lib64",
        prefix / "bin" / "nvcc", prefix / "nvvm" / "bin" / "cicc"})
    fs::permissions(path, fs::perms(0755));
  const auto& layout = ownership::toolkit_layout();
  CHECK(ownership::check_prefix(prefix, layout, "toolkit").ok());
  CHECK(ownership::check_prefix(dir.path() / "missing", layout, "toolkit").ok());
  const std::pair<fs::path, std::string> levels[] = {
      {prefix, "toolkit directory"},
      {prefix / "bin", "toolkit directory"},
      {prefix / "bin" / "nvcc", "toolkit program"},
      {prefix / "nvvm" / "bin" / "cicc", "toolkit program"},
      {prefix / "lib64", "toolkit library directory"}};
  for (const auto& [path, what] : levels) {
    fs::permissions(path, fs::perms(0775));
    const auto refused = ownership::check_prefix(prefix, layout, "toolkit");
    REQUIRE_FALSE(refused.ok());
    CHECK(text::starts_with(refused.error().message,
                            what + " " + path.string() + " is writable by its group (mode 0775)"));
    CHECK(text::contains(refused.error().hint, "chmod go-w " + path.string()));
    fs::permissions(path, fs::perms(0755));
  }
  // A link in bin/ is judged by the file it leads to.
  test::write_file(dir.path() / "elsewhere", "#!/bin/sh\n");
  fs::permissions(dir.path() / "elsewhere", fs::perms(0777));
  fs::create_symlink(dir.path() / "elsewhere", prefix / "bin" / "ptxas");
  CHECK(text::contains(ownership::check_prefix(prefix, layout, "toolkit").error().message,
                       "toolkit program " + (prefix / "bin" / "ptxas").string()));
}

TEST_CASE("a relative root is refused, in CUDAENV_ROOT, CUDAENV_SYSTEM_ROOTS and the check") {
  using Variables = std::map<std::string, std::string>;
  CHECK(paths::check_root_variables(Environment(Variables{{"CUDAENV_ROOT", "/a"}})).ok());
  CHECK(
      paths::check_root_variables(Environment(Variables{{"CUDAENV_SYSTEM_ROOTS", "/a::/b"}})).ok());
  const auto root = paths::check_root_variables(Environment(Variables{{"CUDAENV_ROOT", "store"}}));
  REQUIRE_FALSE(root.ok());
  CHECK(root.error().kind == ErrorKind::usage);
  CHECK(text::starts_with(root.error().message, "CUDAENV_ROOT names a relative path (store)"));
  const auto system =
      paths::check_root_variables(Environment(Variables{{"CUDAENV_SYSTEM_ROOTS", "/a:./s\x1b"}}));
  REQUIRE_FALSE(system.ok());
  CHECK(text::starts_with(system.error().message,
                          "CUDAENV_SYSTEM_ROOTS names a relative path (./s\\x1b)"));
  CHECK_FALSE(ownership::check_data_root("store").ok());
}

TEST_CASE("the home lookup is asked only when HOME and the XDG variables leave it open") {
  using Variables = std::map<std::string, std::string>;
  CHECK_FALSE(paths::needs_home_lookup(Environment(Variables{{"HOME", "/h"}})));
  CHECK(paths::needs_home_lookup(Environment()));
  CHECK(paths::needs_home_lookup(Environment(Variables{{"HOME", "rel"}})));
  CHECK(paths::needs_home_lookup(Environment(Variables{{"CUDAENV_ROOT", "/r"}})));
  CHECK_FALSE(paths::needs_home_lookup(
      Environment(Variables{{"CUDAENV_ROOT", "/r"}, {"XDG_CONFIG_HOME", "/c"}})));
  CHECK_FALSE(paths::needs_home_lookup(
      Environment(Variables{{"XDG_DATA_HOME", "/d"}, {"XDG_CONFIG_HOME", "/c"}})));
  accounts::install({[] { return std::string("/from/lookup"); }, nullptr});
  CHECK(paths::home_directory(Environment()) == "/from/lookup");
  accounts::install({});
  CHECK(paths::home_directory(Environment()) == "/nonexistent");
  CHECK_FALSE(accounts::user_name(0));
}

TEST_CASE("a config file or directory others can write is refused") {
  test::TempDir dir;
  const auto file = dir.path() / "cudaenv" / "config.toml";
  test::write_file(file, "cuda = \"12.4\"\n");
  fs::permissions(file.parent_path(), fs::perms(0755));
  fs::permissions(file, fs::perms(0644));
  CHECK(ownership::check_config_file(file).ok());
  fs::permissions(file, fs::perms(0666));
  CHECK(text::contains(ownership::check_config_file(file).error().message, "config file"));
  fs::permissions(file, fs::perms(0644));
  fs::permissions(file.parent_path(), fs::perms(01777));  // sticky and ours
  CHECK(ownership::check_config_file(file).ok());
  fs::permissions(file.parent_path(), fs::perms(0777));
  CHECK(text::contains(ownership::check_config_file(file).error().message, "config directory"));
  if (::geteuid() == 0) {
    fs::permissions(file.parent_path(), fs::perms(0755));
    REQUIRE(::chown(file.c_str(), 65534, 65534) == 0);
    CHECK(text::contains(ownership::check_config_file(file).error().message,
                         "is owned by uid 65534 (you are 0)"));
  }
}

}  // namespace cudaenv
