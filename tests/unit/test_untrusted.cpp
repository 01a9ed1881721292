// The validator every untrusted field passes, and the one writer every file goes through.

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "core/untrusted.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using cudaenv::untrusted::Field;
using cudaenv::untrusted::is_valid;

TEST_CASE("untrusted release versions are numbers and dots") {
  for (const char* good : {"12", "12.4", "12.4.1", "9.1.0.70", "13.0.2"})
    CHECK(is_valid(Field::release_version, good));
  for (const char* bad : {"", "..", "12..4", "../../x", "12.4/../..", "v12.4", "12.4.1.2.3",
                          "1234567", "12.4 ", "-12", "12.4\n", "%2e%2e"})
    CHECK_FALSE(is_valid(Field::release_version, bad));
}

TEST_CASE("untrusted names and component versions cannot become a path or an option") {
  CHECK(is_valid(Field::component_name, "cuda_nvcc"));
  CHECK(is_valid(Field::component_name, "linux-x86_64"));
  CHECK(is_valid(Field::component_version, "12.4.127"));
  CHECK(is_valid(Field::component_version, "2024.1.0+local"));
  for (const char* bad : {"", ".", "..", "a..b", ".hidden", "-rf", "a/b", "a b", "a;b", "a\"b",
                          "a]b", "a$b", "a\033b", "\xc3\xa9"})
    CHECK_FALSE(is_valid(Field::component_name, bad));
  CHECK_FALSE(is_valid(Field::component_version, "latest"));
  CHECK_FALSE(is_valid(Field::component_name, std::string(129, 'a')));
}

TEST_CASE("untrusted relative paths stay below their directory") {
  CHECK(is_valid(Field::relative_path,
                 "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"));
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../b", "a/./b", "a//b", "a/", "%2e%2e/x",
                          "a/%2e%2e", "a\\..\\b", "a/-x", "a/b c"})
    CHECK_FALSE(is_valid(Field::relative_path, bad));
}

TEST_CASE("untrusted GPU architecture names are sm_ and digits and one letter") {
  for (const char* good : {"sm_70", "sm_90a", "sm_100", "sm_100f", "sm_120a"})
    CHECK(is_valid(Field::gpu_arch, good));
  for (const char* bad : {"sm_", "sm_9", "sm_1000", "sm_90ab", "sm_90]", "sm_90 [exec x]",
                          "compute_90", "sm_90A", "SM_90", "sm_90\"; os.execute(\"x\") --"})
    CHECK_FALSE(is_valid(Field::gpu_arch, bad));
}

TEST_CASE("untrusted download sizes are whole numbers of bytes up to 64 GiB") {
  for (const char* good : {"0", "1", "2364", "862715244", "68719476736"})
    CHECK(is_valid(Field::byte_size, good));
  for (const char* bad : {"", "-5", "+5", "1.5", "1e9", "0x10", "012", " 12", "12 ", "68719476737",
                          "99999999999", "184467440737095516160", "twelve", "1,000"})
    CHECK_FALSE(is_valid(Field::byte_size, bad));
  CHECK(cudaenv::untrusted::byte_size("68719476736", "here").value() == 68719476736ULL);
  const auto refused = cudaenv::untrusted::byte_size("-5", "https://m/x.json: cuda_nvcc.size");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == cudaenv::ErrorKind::integrity);
  CHECK(refused.error().message.find(
            "https://m/x.json: cuda_nvcc.size: \"-5\" is not a size in bytes") == 0);
}

TEST_CASE("untrusted dates and revisions are calendar days") {
  CHECK(is_valid(Field::date, "2026-11-29"));
  CHECK(is_valid(Field::date, "2024-02-29"));
  CHECK_FALSE(is_valid(Field::date, "2023-02-29"));
  CHECK_FALSE(is_valid(Field::date, "2026-13-01"));
  CHECK_FALSE(is_valid(Field::date, "2026-1-01"));
  CHECK(is_valid(Field::revision, "2026-11-29"));
  CHECK(is_valid(Field::revision, "2026-11-29.2"));
  for (const char* bad : {"2026-11-29.", "2026-11-29.99999", "9999-99-99", "2026-11-29-x",
                          "../2026-11-29", "2026-11-29/.."})
    CHECK_FALSE(is_valid(Field::revision, bad));
}

TEST_CASE("untrusted sha256 and URLs") {
  CHECK(is_valid(Field::sha256, std::string(64, 'a')));
  CHECK_FALSE(is_valid(Field::sha256, std::string(64, 'A')));
  CHECK_FALSE(is_valid(Field::sha256, std::string(63, 'a')));
  CHECK(is_valid(Field::url, "https://download.pytorch.org/whl/cu121"));
  CHECK(is_valid(Field::url, "file:///srv/mirror"));
  for (const char* bad :
       {"ftp://x", "https://x y", "https://x;$(id)", "https://x'", "https://x\n", "-e"})
    CHECK_FALSE(is_valid(Field::url, bad));
}

TEST_CASE("untrusted Python package names are PEP 508 names with optional extras") {
  for (const char* good : {"torch", "jax[cuda12]", "tensorflow[and-cuda]", "nvidia-cudnn-cu12", "a",
                           "zope.interface", "pkg[a,b]"})
    CHECK(is_valid(Field::python_package, good));
  for (const char* bad : {"", "-e", ".x", "x-", "jax[]", "jax[cuda12", "jax[a,,b]", "jax[a]b",
                          "a b", "a;b", "$(id)", "a/b", "../x", "x==1", "x[a]]", "-rf[x]"})
    CHECK_FALSE(is_valid(Field::python_package, bad));
  CHECK_FALSE(is_valid(Field::python_package, std::string(129, 'a')));
}

TEST_CASE("an untrusted value's error names where it came from, escaped") {
  const auto status = cudaenv::untrusted::check(Field::release_version, "1\x1b[2J",
                                                "/p/.cudaenv.lock: toolkit.version");
  REQUIRE_FALSE(status);
  CHECK(status.error().kind == cudaenv::ErrorKind::integrity);
  CHECK(status.error().message.find("/p/.cudaenv.lock: toolkit.version") == 0);
  CHECK(status.error().message.find('\x1b') == std::string::npos);
}

TEST_CASE("the safe writer never follows a link planted under the target or a temporary name") {
  cudaenv::test::TempDir dir;
  const auto victim = dir.path() / "bashrc";
  cudaenv::test::write_file(victim, "precious\n");
  const auto repo = dir.path() / "repo";
  fs::create_directories(repo);
  fs::create_symlink(victim, repo / ".cudaenv");
  // The names the old writer used, and a spray of likely temporary names.
  for (int pid = 1; pid < 64; ++pid)
    fs::create_symlink(victim, repo / (".cudaenv.tmp-" + std::to_string(pid)));
  fs::create_symlink(victim, repo / (".cudaenv.tmp-" + std::to_string(::getpid())));

  REQUIRE(cudaenv::write_file_atomically(repo / ".cudaenv", "cuda = \"12.4\"\n"));
  CHECK(*cudaenv::read_small_file(victim) == "precious\n");
  CHECK_FALSE(fs::is_symlink(repo / ".cudaenv"));
  CHECK(*cudaenv::read_small_file(repo / ".cudaenv") == "cuda = \"12.4\"\n");
  int leftovers = 0;
  for (const auto& entry : fs::directory_iterator(repo))
    if (!fs::is_symlink(entry.symlink_status())) ++leftovers;
  CHECK(leftovers == 1);  // only .cudaenv itself: no temporary file left behind
}

TEST_CASE("the safe writer keeps a replaced file's mode and refuses a directory") {
  cudaenv::test::TempDir dir;
  const auto file = dir.path() / "config.toml";
  cudaenv::test::write_file(file, "old\n");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  REQUIRE(cudaenv::write_file_atomically(file, "new\n"));
  CHECK((fs::status(file).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  fs::create_directories(dir.path() / "taken");
  const auto refused = cudaenv::write_file_atomically(dir.path() / "taken", "x");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("taken") != std::string::npos);
}

TEST_CASE("the safe symlink replacement swaps a link in one rename") {
  cudaenv::test::TempDir dir;
  const auto link = dir.path() / "current";
  REQUIRE(cudaenv::replace_symlink_atomically(link, "bundles/1"));
  REQUIRE(cudaenv::replace_symlink_atomically(link, "bundles/2"));
  CHECK(fs::read_symlink(link) == "bundles/2");
}

TEST_CASE("a write through a directory's descriptor stays there when the name becomes a link") {
  // modules write checks DIR/cuda, then writes in it: swapping DIR/cuda for a link to another
  // directory in between must not carry the write there.
  cudaenv::test::TempDir dir;
  const auto family = dir.path() / "cuda";
  const auto elsewhere = dir.path() / "etc";
  fs::create_directories(family);
  fs::create_directories(elsewhere);
  const cudaenv::UniqueFd fd(::open(family.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  REQUIRE(fd);
  fs::rename(family, dir.path() / "cuda.checked");
  fs::create_directory_symlink(elsewhere, family);
  REQUIRE(cudaenv::write_file_atomically_at(fd.get(), "13.0.2.lua", "-- module\n",
                                            family / "13.0.2.lua"));
  CHECK(fs::is_regular_file(dir.path() / "cuda.checked" / "13.0.2.lua"));
  CHECK(fs::is_empty(elsewhere));
  CHECK_FALSE(cudaenv::write_file_atomically_at(fd.get(), "../x", "x", family / "../x"));
}
