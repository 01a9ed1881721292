// Modulefile text from store facts (pure), and the owner records of cross-host store locks.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>

#include <doctest/doctest.h>

#include "install/lock.hpp"
#include "install/lock_owner.hpp"
#include "modules/modulefile.hpp"
#include "test_util.hpp"

using namespace cudaenv;

namespace {

modules::ModuleSet two_toolkits() {
  modules::ToolkitModule newer{
      "12.4.1", "/opt/cudaenv/toolkits/12.4.1", "550.54.15", "525.60.13", "sm_50 sm_90", 13};
  newer.has_stubs = true;
  modules::ToolkitModule older{
      "11.8.0", "/opt/cudaenv/toolkits/11.8.0", "520.61.05", "450.80.02", "sm_35 sm_90", 11};
  return {{newer, older}, {{"9.1.0", 12, "/opt/cudaenv/cudnn/9.1.0-cuda12"}}};
}

std::string text_of(const std::vector<modules::ModuleFile>& files, const std::string& name) {
  for (const auto& file : files) {
    if (file.relative == name) return file.text;
  }
  return "";
}

}  // namespace

TEST_CASE("Lua modulefiles: family, pushenv, stubs, floors and the fallback list") {
  auto files = modules::modulefiles(two_toolkits(), modules::Format::lua);
  REQUIRE(files.ok());
  const auto text = text_of(*files, "cuda/12.4.1.lua");
  CHECK(text.find(modules::generated_marker) != std::string::npos);
  CHECK(text.find("family(\"cuda\")") != std::string::npos);
  CHECK(text.find("pushenv(\"CUDA_HOME\", prefix)") != std::string::npos);
  CHECK(text.find("lib64/stubs") != std::string::npos);
  CHECK(text.find("local lowest = \"525.60.13\"") != std::string::npos);
  CHECK(text.find("{\"11.8.0\", \"450.80.02\"}") != std::string::npos);
  CHECK(text.find("whatis(\"Host compiler: gcc <= 13\")") != std::string::npos);
  CHECK(text_of(*files, "cuda/11.8.0.lua").find("lib64/stubs") == std::string::npos);
  const auto cudnn = text_of(*files, "cudnn/9.1.0-cuda12.lua");
  CHECK(cudnn.find("local cudas = {\"cuda/12.4.1\", }") != std::string::npos);
}

TEST_CASE("Tcl modulefiles: the header engines require, conflict, braced words") {
  auto files = modules::modulefiles(two_toolkits(), modules::Format::tcl);
  REQUIRE(files.ok());
  const auto text = text_of(*files, "cuda/12.4.1");
  CHECK(text.rfind("#%Module1.0\n", 0) == 0);
  CHECK(text.find("conflict cuda\n") != std::string::npos);
  CHECK(text.find("set prefix {/opt/cudaenv/toolkits/12.4.1}") != std::string::npos);
  CHECK(text.find("[list {11.8.0} {450.80.02}]") != std::string::npos);
}

TEST_CASE("paths a modulefile cannot carry safely are refused, naming the character") {
  for (const char* bad : {"/a\"b", "/a$(x)", "/a{b}", "/a:b", "/a\\b", "/a\nb", "/a`b`", "/a'b"}) {
    auto set = two_toolkits();
    set.toolkits[0].prefix = bad;
    auto files = modules::modulefiles(set, modules::Format::lua);
    REQUIRE_FALSE(files.ok());
    CHECK(files.error().kind == ErrorKind::usage);
    CHECK(files.error().message.find("cannot write modulefiles for") != std::string::npos);
  }
  CHECK(modules::check_quotable("/home/a b/.local/share/cudaenv-2@x,y=z~%").ok());
  CHECK(modules::lua_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
}

TEST_CASE("database values that are not what they claim never reach a modulefile") {
  for (const auto format : {modules::Format::lua, modules::Format::tcl}) {
    for (const char* archs :
         {"sm_90} [exec touch /tmp/x] {", "sm_90\") os.execute(\"id\") --", "sm_90\nputs x"}) {
      auto set = two_toolkits();
      set.toolkits[0].archs = archs;
      auto files = modules::modulefiles(set, format);
      REQUIRE_FALSE(files.ok());
      CHECK(files.error().kind == ErrorKind::integrity);
      CHECK(files.error().message.find("GPU architecture") != std::string::npos);
    }
    auto set = two_toolkits();
    set.toolkits[1].full_floor = "1} [exec id] {";
    CHECK_FALSE(modules::modulefiles(set, format).ok());
    set = two_toolkits();
    set.toolkits[0].store = "store /a}b";
    CHECK_FALSE(modules::modulefiles(set, format).ok());
  }
}

TEST_CASE("Tcl words and Lua strings carry any value back exactly, without substitution") {
  CHECK(modules::tcl_word("/opt/a b") == "{/opt/a b}");
  CHECK(modules::tcl_word("a}b [exec x]") == "a\\}b\\ \\[exec\\ x\\]");
  CHECK(modules::tcl_word("a\\b$c") == "a\\\\b\\$c");
  CHECK(modules::tcl_word("a\nb") == "a\\u000ab");
  CHECK(modules::tcl_word("") == "{}");
  CHECK(modules::lua_string("a\nb\x01") == "\"a\\010b\\001\"");
}

TEST_CASE("owner records: a dead local pid or a silent other host is stale, a live one is not") {
  using Clock = std::chrono::system_clock;
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  install::OwnerRecord mine{host, static_cast<long>(::getpid()), 0, "x"};
  CHECK_FALSE(install::stale_reason(mine, Clock::now() - std::chrono::hours(5)).has_value());
  install::OwnerRecord gone{host, 999999999, 0, "x"};
  CHECK(install::stale_reason(gone, Clock::now()) ==
        std::optional<std::string>("that process is gone"));
  install::OwnerRecord remote{"node17.example", 42, 0, "x"};
  CHECK_FALSE(install::stale_reason(remote, Clock::now()).has_value());
  CHECK(install::stale_reason(remote, Clock::now() - std::chrono::minutes(10)).has_value());
}

TEST_CASE("a held lock has a live owner file, releasing it removes the file") {
  test::TempDir dir;
  const auto lock_file = dir.path() / ".lock-12.4.1";
  {
    auto lock = install::InstallLock::acquire(lock_file, {});
    REQUIRE(lock.ok());
    CHECK(std::filesystem::exists(install::owner_file(lock_file)));
    CHECK(install::has_live_owner(lock_file));
  }
  CHECK_FALSE(std::filesystem::exists(install::owner_file(lock_file)));
  CHECK_FALSE(install::InstallLock::is_held(lock_file));
}
