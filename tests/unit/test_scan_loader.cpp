// scan's loader simulation: this machine's real ld.so cache against `ldconfig -p`, and crafted
// RPATH/RUNPATH/$ORIGIN layouts (libraries built here with the C compiler) against what the
// real dynamic loader picks for the same files and environment (`ldd`).

#include <filesystem>
#include <set>

#include <doctest/doctest.h>

#include "core/process.hpp"
#include "core/text.hpp"
#include "scan/ld_cache.hpp"
#include "scan/loader.hpp"
#include "scan/mapped_file.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::scan;
namespace fs = std::filesystem;

namespace {

Result<ProcessResult> run(const std::vector<std::string>& argv,
                          std::optional<std::map<std::string, std::string>> env = std::nullopt) {
  SystemProcessRunner runner;
  return runner.run({argv, std::move(env), std::chrono::minutes(1)});
}

// libdep.so.1 in two places, and libuser.so needing it with a search path of $ORIGIN/../lib.
struct Layout {
  test::TempDir dir;
  std::string error;

  Layout() {
    test::write_file(dir.path() / "dep.c", "int dep_value(void) { return 1; }\n");
    test::write_file(dir.path() / "user.c",
                     "int dep_value(void);\nint user(void) { return dep_value(); }\n");
    fs::create_directories(dir.path() / "app/bin");
    fs::create_directories(dir.path() / "app/lib");
    fs::create_directories(dir.path() / "other");
    build({"-shared", "-fPIC", "-Wl,-soname,libdep.so.1", "dep.c", "-o", "app/lib/libdep.so.1"});
    build({"-shared", "-fPIC", "-Wl,-soname,libdep.so.1", "dep.c", "-o", "other/libdep.so.1"});
    build({"-shared", "-fPIC", "user.c", "-Lapp/lib", "-l:libdep.so.1", "-Wl,-rpath,$ORIGIN/../lib",
           "-Wl,--enable-new-dtags", "-o", "app/bin/librunpath.so"});
    build({"-shared", "-fPIC", "user.c", "-Lapp/lib", "-l:libdep.so.1", "-Wl,-rpath,$ORIGIN/../lib",
           "-Wl,--disable-new-dtags", "-o", "app/bin/librpath.so"});
    build(
        {"-shared", "-fPIC", "user.c", "-Lapp/lib", "-l:libdep.so.1", "-o", "app/bin/libplain.so"});
  }

  void build(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), "cc");
    std::vector<std::string> argv{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.path().string()};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    auto result = run(argv);
    if (!result || !result->succeeded()) error += result ? result->err : result.error().message;
  }

  std::string path(const std::string& relative) const { return (dir.path() / relative).string(); }
};

// What the real loader resolves libdep.so.1 to for `file` ("not found" when it finds nothing).
std::string real_loader_pick(const std::string& file, const std::string& ld_library_path) {
  std::map<std::string, std::string> env{{"PATH", "/usr/bin:/bin"}};
  if (!ld_library_path.empty()) env["LD_LIBRARY_PATH"] = ld_library_path;
  auto result = run({"ldd", file}, env);
  REQUIRE(result);
  for (const auto& line : text::lines(result->out)) {
    const auto trimmed = std::string(text::trim(line));
    if (!text::starts_with(trimmed, "libdep.so.1 => ")) continue;
    const auto target = trimmed.substr(std::string_view("libdep.so.1 => ").size());
    return target.substr(0, target.find(" ("));
  }
  return "missing";
}

std::string simulated_pick(const std::string& file, const std::string& ld_library_path) {
  LoaderInput input{"libdep.so.1",
                    file,
                    ld_library_path,
                    {},
                    default_library_directories(),
                    default_platform_token(),
                    default_lib_token()};
  auto answer = simulate_loader(input);
  REQUIRE(answer);
  return answer->winner ? fs::canonical(answer->winner->candidate).string() : "not found";
}

std::string canonical_or(const std::string& path) {
  std::error_code error;
  const auto real = fs::canonical(path, error);
  return error ? path : real.string();
}

}  // namespace

TEST_CASE("loader: this machine's ld.so cache reads as ldconfig -p lists it") {
  auto file = MappedFile::open("/etc/ld.so.cache");
  auto listing = run({"/bin/sh", "-c", "ldconfig -p 2>/dev/null || /sbin/ldconfig -p"});
  if (!file || !listing || !listing->succeeded()) {
    MESSAGE("skipped: no /etc/ld.so.cache or no ldconfig here");
    return;
  }
  auto entries = parse_ld_cache(file->bytes());
  REQUIRE(entries);
  std::set<std::string> ours, theirs;
  for (const auto& entry : *entries)
    if (entry_for_this_machine(entry.flags))
      ours.insert(std::string(entry.soname) + " => " + std::string(entry.path));
  for (const auto& line : text::lines(listing->out)) {
    // "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1"
    const auto open = line.find(" (libc6,");
    const auto arrow = line.find(") => ");
    if (open == std::string::npos || arrow == std::string::npos) continue;
    const auto flags = line.substr(open, arrow - open);
    if (!text::contains(flags, "x86-64") && !text::contains(flags, "AArch64")) continue;
    theirs.insert(std::string(text::trim(line.substr(0, open))) + " => " + line.substr(arrow + 5));
  }
  CHECK(ours.size() > 10);
  CHECK(ours == theirs);
}

TEST_CASE("loader: a damaged cache is an error naming what is wrong") {
  std::string cache = "glibc-ld.so.cache1.1";
  cache.resize(48);
  cache[20] = '\x7f';  // 127 entries claimed, none present
  const auto bytes = std::span(reinterpret_cast<const unsigned char*>(cache.data()), cache.size());
  const auto parsed = parse_ld_cache(bytes);
  REQUIRE_FALSE(parsed);
  CHECK(text::contains(parsed.error().message, "do not fit"));
  CHECK_FALSE(parse_ld_cache(bytes.first(10)));
}

TEST_CASE("loader: RUNPATH, RPATH and LD_LIBRARY_PATH pick what the real loader picks") {
  Layout layout;
  REQUIRE_MESSAGE(layout.error.empty(), layout.error);
  const auto app_copy = canonical_or(layout.path("app/lib/libdep.so.1"));
  const auto other_copy = canonical_or(layout.path("other/libdep.so.1"));
  struct Case {
    const char* file;
    std::string ld_library_path;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"app/bin/librunpath.so", "", app_copy},                      // $ORIGIN/../lib
      {"app/bin/librunpath.so", layout.path("other"), other_copy},  // LD_LIBRARY_PATH first
      {"app/bin/librpath.so", layout.path("other"), app_copy},      // DT_RPATH before it
      {"app/bin/libplain.so", layout.path("other"), other_copy},
      {"app/bin/libplain.so", "", "not found"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.ld_library_path);
    const auto file = layout.path(c.file);
    const auto real = real_loader_pick(file, c.ld_library_path);
    CHECK(simulated_pick(file, c.ld_library_path) == c.expected);
    CHECK(canonical_or(real) == (c.expected == "not found" ? "not found" : c.expected));
  }
}

TEST_CASE("loader: the search order is reported step by step, RPATH ignored beside RUNPATH") {
  Layout layout;
  REQUIRE_MESSAGE(layout.error.empty(), layout.error);
  LoaderInput input{"libdep.so.1",
                    layout.path("app/bin/librunpath.so"),
                    layout.path("other-missing"),
                    {},
                    {"/nonexistent-default"},
                    "x86_64",
                    "lib/x86_64-linux-gnu"};
  auto answer = simulate_loader(input);
  REQUIRE(answer);
  REQUIRE(answer->steps.size() == 2);
  CHECK(answer->steps[0].source == "LD_LIBRARY_PATH");
  CHECK_FALSE(answer->steps[0].found);
  CHECK(answer->steps[1].source == "DT_RUNPATH of librunpath.so");
  CHECK(answer->steps[1].candidate == layout.path("app/lib/libdep.so.1"));
  CHECK(expand_dynamic_tokens("${ORIGIN}/x:$LIB/$PLATFORM", "/o", "lib64", "x86_64") ==
        "/o/x:lib64/x86_64");
}

TEST_CASE("loader: a requester that is not an ELF file is an error naming it") {
  test::TempDir dir;
  test::write_file(dir.path() / "script.sh", "#!/bin/sh\n");
  LoaderInput input{"libdep.so.1", (dir.path() / "script.sh").string(), "", {}, {}, "", ""};
  const auto answer = simulate_loader(input);
  REQUIRE_FALSE(answer);
  CHECK(text::contains(answer.error().message, "script.sh"));
}
