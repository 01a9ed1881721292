// install::extract on real archives, written in the test with libarchive's own writer, and the
// path and link checks that keep every entry inside the destination.

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core/text.hpp"
#include "install/extract.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using cudaenv::install::extract;
using cudaenv::install::unsafe_link_reason;
using cudaenv::install::unsafe_path_reason;
using cudaenv::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string path;
  std::string data;
  mode_t type = AE_IFREG;
  int perm = 0644;
  std::string link;  // symlink target, or hard link target for kind "hardlink"
  bool hardlink = false;
};

Entry dir_entry(std::string path) { return {std::move(path), "", AE_IFDIR, 0755, "", false}; }
Entry file_entry(std::string path, std::string data, int perm = 0644) {
  return {std::move(path), std::move(data), AE_IFREG, perm, "", false};
}
Entry symlink_entry(std::string path, std::string target) {
  return {std::move(path), "", AE_IFLNK, 0777, std::move(target), false};
}
Entry hardlink_entry(std::string path, std::string target) {
  return {std::move(path), "", AE_IFREG, 0644, std::move(target), true};
}
Entry special_entry(std::string path, mode_t type) {
  return {std::move(path), "", type, 0644, "", false};
}

enum class Filter { none, xz };

// A tar archive (pax) in memory, optionally compressed.
std::string make_archive(const std::vector<Entry>& entries, Filter filter = Filter::none) {
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (filter == Filter::xz) archive_write_add_filter_xz(a);
  std::vector<char> buffer(4 << 20);
  size_t used = 0;
  REQUIRE(archive_write_open_memory(a, buffer.data(), buffer.size(), &used) == ARCHIVE_OK);
  for (const auto& e : entries) {
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, static_cast<mode_t>(e.perm));
    archive_entry_set_mtime(entry, 1700000000, 0);
    if (e.type == AE_IFCHR || e.type == AE_IFBLK) archive_entry_set_rdev(entry, makedev(1, 3));
    if (e.type == AE_IFLNK) archive_entry_set_symlink(entry, e.link.c_str());
    if (e.hardlink) {
      archive_entry_set_hardlink(entry, e.link.c_str());
      archive_entry_set_size(entry, 0);
    } else if (e.type == AE_IFREG) {
      archive_entry_set_size(entry, static_cast<la_int64_t>(e.data.size()));
    }
    REQUIRE(archive_write_header(a, entry) == ARCHIVE_OK);
    if (!e.data.empty()) {
      REQUIRE(archive_write_data(a, e.data.data(), e.data.size()) ==
              static_cast<la_ssize_t>(e.data.size()));
    }
    archive_entry_free(entry);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
  return std::string(buffer.data(), used);
}

// Feeds `bytes` to extract in small chunks, as a download would.
Result<install::ExtractStats> extract_bytes(const std::string& bytes, const fs::path& destination,
                                            const std::string& component = "cuda_nvcc",
                                            std::uint64_t max_unpacked = 0) {
  size_t offset = 0;
  const install::ChunkSource source = [&]() -> Result<std::string_view> {
    const auto size = std::min<size_t>(1000, bytes.size() - offset);
    std::string_view chunk(bytes.data() + offset, size);
    offset += size;
    return chunk;
  };
  return extract(source, {destination, "test.tar", component, "share/licenses", max_unpacked});
}

// The same with options of the test's choosing (lower caps).
Result<install::ExtractStats> extract_with(const std::string& bytes,
                                           install::ExtractOptions options) {
  size_t offset = 0;
  const install::ChunkSource source = [&]() -> Result<std::string_view> {
    const auto size = std::min<size_t>(1000, bytes.size() - offset);
    std::string_view chunk(bytes.data() + offset, size);
    offset += size;
    return chunk;
  };
  options.archive_name = "test.tar";
  options.component = "cuda_nvcc";
  return extract(source, options);
}

std::string repeated(std::string_view piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

// The error of an extraction that must fail as archive damage, naming `entry` and `why`.
void check_damage(const Result<install::ExtractStats>& result, const std::string& entry,
                  const std::string& why) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::integrity);
  CHECK(result.error().message == "corrupt or hostile archive: test.tar: " + entry + ": " + why);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every path below `root`, relative, sorted, one per line.
std::string tree(const fs::path& root) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    paths.push_back(entry.path().lexically_relative(root).string());
  }
  std::sort(paths.begin(), paths.end());
  std::string text;
  for (const auto& path : paths) text += path + "\n";
  return text;
}

const std::string top = "cuda_nvcc-linux-x86_64-12.4.131-archive";

}  // namespace

TEST_CASE("entry paths: absolute and .. are unsafe, everything else is fine") {
  CHECK(unsafe_path_reason("top/bin/nvcc").empty());
  CHECK(unsafe_path_reason("./top/bin/nvcc").empty());
  CHECK(unsafe_path_reason("top/./bin//nvcc").empty());
  CHECK(unsafe_path_reason("top/bin/..nvcc..").empty());
  CHECK(unsafe_path_reason("/etc/passwd") == "absolute path");
  CHECK(unsafe_path_reason("//etc/passwd") == "absolute path");
  CHECK(unsafe_path_reason("..") == "path contains ..");
  CHECK(unsafe_path_reason("top/../../evil") == "path contains ..");
  CHECK(unsafe_path_reason("top/bin/..") == "path contains ..");
  CHECK(unsafe_path_reason("") == "empty path");
  CHECK(unsafe_path_reason("top/" + std::string(255, 'n')).empty());
  CHECK(unsafe_path_reason("top/" + std::string(256, 'n')) == "a name longer than 255 bytes");
  CHECK(unsafe_path_reason(repeated("d/", 512)).empty());
  CHECK(unsafe_path_reason(repeated("d/", 512) + "x") == "path longer than 1024 bytes");
  CHECK(unsafe_link_reason("x", repeated("d/", 512) + "x") == "link target longer than 1024 bytes");
}

TEST_CASE("link targets: relative links that stay below the destination are fine") {
  CHECK(unsafe_link_reason("lib64", "lib").empty());
  CHECK(unsafe_link_reason("lib/libcudart.so", "libcudart.so.12").empty());
  CHECK(unsafe_link_reason("bin/crt", "../include/crt").empty());
  CHECK(unsafe_link_reason("a/b/c/d", "../../../x").empty());
  CHECK(unsafe_link_reason("a/b", "..").empty());
  CHECK(unsafe_link_reason("a/b", "./.././x").empty());
}

TEST_CASE("link targets: absolute, empty, or climbing above the destination are unsafe") {
  CHECK(unsafe_link_reason("bin/x", "/etc/passwd") == "link to an absolute path");
  CHECK(unsafe_link_reason("bin/x", "") == "empty link target");
  CHECK(unsafe_link_reason("x", "../y") == "link points outside the install directory");
  CHECK(unsafe_link_reason("bin/x", "../../y") == "link points outside the install directory");
  CHECK(unsafe_link_reason("a/b/c", "../../../../../../etc") ==
        "link points outside the install directory");
  // Lexically inside, but "b" may itself be a link: "b/../.." climbs from wherever b leads.
  CHECK(unsafe_link_reason("c", "a/b/../..") == "link target has .. after a name");
  CHECK(unsafe_link_reason("bin/x", "sub/../y") == "link target has .. after a name");
  CHECK(unsafe_link_reason("c", "a/b/a/b/../../x") == "link target has .. after a name");
}

TEST_CASE("extract strips the top directory, keeps modes and links, moves LICENSE aside") {
  TempDir tmp;
  const auto dest = tmp.path() / "prefix";
  const auto bytes =
      make_archive({dir_entry(top), file_entry(top + "/bin/nvcc", "#!/bin/sh\necho nvcc\n", 0755),
                    file_entry(top + "/lib/libnvvm.so.4", "elf"),
                    symlink_entry(top + "/lib/libnvvm.so", "libnvvm.so.4"),
                    symlink_entry(top + "/bin/lib", "../lib"),
                    hardlink_entry(top + "/lib/libnvvm.hard", top + "/lib/libnvvm.so.4"),
                    file_entry(top + "/LICENSE", "license text\n")},
                   Filter::xz);
  auto stats = extract_bytes(bytes, dest);
  REQUIRE_MESSAGE(stats.ok(), (stats.ok() ? "" : stats.error().message));
  CHECK(stats->entries == 6);  // the top directory itself is not an entry of the prefix
  CHECK(stats->bytes == std::string("#!/bin/sh\necho nvcc\n").size() + 3 + 13);
  CHECK(tree(dest) ==
        "bin\nbin/lib\nbin/nvcc\nlib\nlib/libnvvm.hard\nlib/libnvvm.so\nlib/libnvvm.so.4\nshare\n"
        "share/licenses\nshare/licenses/cuda_nvcc\nshare/licenses/cuda_nvcc/LICENSE\n");
  CHECK(slurp(dest / "bin/nvcc") == "#!/bin/sh\necho nvcc\n");
  CHECK((fs::status(dest / "bin/nvcc").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(fs::read_symlink(dest / "lib/libnvvm.so") == "libnvvm.so.4");
  CHECK(fs::read_symlink(dest / "bin/lib") == "../lib");
  CHECK(fs::equivalent(dest / "lib/libnvvm.hard", dest / "lib/libnvvm.so.4"));
  CHECK(fs::hard_link_count(dest / "lib/libnvvm.so.4") == 2);
  CHECK(slurp(dest / "share/licenses/cuda_nvcc/LICENSE") == "license text\n");
}

TEST_CASE("two components extract into one prefix, their licenses do not collide") {
  TempDir tmp;
  const auto dest = tmp.path() / "prefix";
  auto a = extract_bytes(
      make_archive({file_entry("a-archive/LICENSE", "A"), file_entry("a-archive/bin/a", "a")}),
      dest, "comp_a");
  auto b = extract_bytes(
      make_archive({file_entry("b-archive/LICENSE", "B"), file_entry("b-archive/bin/b", "b")}),
      dest, "comp_b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(slurp(dest / "share/licenses/comp_a/LICENSE") == "A");
  CHECK(slurp(dest / "share/licenses/comp_b/LICENSE") == "B");
  CHECK(fs::exists(dest / "bin/a"));
  CHECK(fs::exists(dest / "bin/b"));
}

TEST_CASE("every unsafe entry kind is refused as an integrity error naming the entry") {
  TempDir tmp;
  const auto outside = tmp.path() / "outside";
  const std::string secret = (tmp.path() / "secret").string();
  test::write_file(secret, "secret\n");
  struct Case {
    std::string what;
    std::vector<Entry> entries;
    std::string named;  // the entry the message names
    std::string why;
  };
  const std::vector<Case> cases = {
      {"absolute path", {file_entry(outside.string(), "evil")}, outside.string(), "absolute path"},
      {"dot-dot path",
       {file_entry(top + "/../../outside", "evil")},
       top + "/../../outside",
       "path contains .."},
      {"symlink to an absolute path",
       {symlink_entry(top + "/bin/evil", outside.string()),
        file_entry(top + "/bin/evil/x", "evil")},
       top + "/bin/evil",
       "link to an absolute path"},
      {"symlink climbing out",
       {symlink_entry(top + "/bin/up", "../../../../outside"),
        file_entry(top + "/bin/up/x", "evil")},
       top + "/bin/up",
       "link points outside"},
      {"symlink chain climbing out",
       {symlink_entry(top + "/a/b", ".."), symlink_entry(top + "/c", "a/b/a/b/../../outside")},
       top + "/c",
       "link target has .. after a name"},
      {"hard link to an absolute path",
       {hardlink_entry(top + "/bin/hl", secret)},
       top + "/bin/hl",
       "hard link: absolute path"},
      {"hard link climbing out",
       {hardlink_entry(top + "/bin/hl", top + "/../../secret")},
       top + "/bin/hl",
       "hard link: path contains .."},
      {"FIFO", {special_entry(top + "/bin/fifo", AE_IFIFO)}, top + "/bin/fifo", "FIFO"},
      {"character device",
       {special_entry(top + "/dev/null", AE_IFCHR)},
       top + "/dev/null",
       "character device"},
      {"block device",
       {special_entry(top + "/dev/sda", AE_IFBLK)},
       top + "/dev/sda",
       "block device"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const auto dest = tmp.path() / "staging" / "deep" / "prefix";
    fs::remove_all(tmp.path() / "staging");
    std::vector<Entry> entries = {dir_entry(top), file_entry(top + "/bin/ok", "ok")};
    entries.insert(entries.end(), c.entries.begin(), c.entries.end());
    auto result = extract_bytes(make_archive(entries), dest);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == ErrorKind::integrity);
    CHECK(result.error().message.find("corrupt or hostile archive: test.tar: " + c.named + ": ") ==
          0);
    CHECK(result.error().message.find(c.why) != std::string::npos);
    CHECK(result.error().hint.find("nothing was installed") != std::string::npos);
    CHECK_FALSE(fs::exists(fs::symlink_status(outside)));
    CHECK(slurp(secret) == "secret\n");
    CHECK(fs::hard_link_count(secret) == 1);
    // Nothing but the staging tree and the two files the test made.
    for (const auto& entry : fs::directory_iterator(tmp.path())) {
      const auto name = entry.path().filename().string();
      CHECK_MESSAGE((name == "staging" || name == "secret"), "unexpected " << entry.path());
    }
  }
}

TEST_CASE("a truncated, corrupt or foreign archive is an integrity error naming the archive") {
  TempDir tmp;
  std::string payload(200000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 7919) % 251);
  const auto entries = std::vector<Entry>{dir_entry(top), file_entry(top + "/lib/big", payload),
                                          file_entry(top + "/bin/x", "x")};

  SUBCASE("xz cut in half") {
    const auto whole = make_archive(entries, Filter::xz);
    auto result = extract_bytes(whole.substr(0, whole.size() / 2), tmp.path() / "p");
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == ErrorKind::integrity);
  }
  SUBCASE("plain tar cut inside a file's data") {
    const auto whole = make_archive(entries);
    auto result = extract_bytes(whole.substr(0, 100000), tmp.path() / "p");
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == ErrorKind::integrity);
    CHECK(result.error().message.find("lib/big") != std::string::npos);
  }
  SUBCASE("xz with one byte flipped") {
    auto whole = make_archive(entries, Filter::xz);
    whole[whole.size() / 2] = static_cast<char>(whole[whole.size() / 2] ^ 0xff);
    auto result = extract_bytes(whole, tmp.path() / "p");
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == ErrorKind::integrity);
  }
  SUBCASE("not an archive at all") {
    auto result = extract_bytes(std::string(4096, 'x'), tmp.path() / "p");
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == ErrorKind::integrity);
    CHECK(result.error().message.find("test.tar: not a readable archive") == 0);
  }
}

TEST_CASE("a failing source stops the extraction with the source's own error") {
  TempDir tmp;
  const auto bytes =
      make_archive({dir_entry(top), file_entry(top + "/lib/big", std::string(100000, 'z'))});
  size_t offset = 0;
  const install::ChunkSource source = [&]() -> Result<std::string_view> {
    if (offset >= 20000)
      return make_error(ErrorKind::network, "http://mirror/x.tar.xz: connection reset");
    std::string_view chunk(bytes.data() + offset, 1000);
    offset += 1000;
    return chunk;
  };
  auto result = extract(source, {tmp.path() / "p", "x.tar.xz", "cuda_nvcc"});
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::network);
  CHECK(result.error().message == "http://mirror/x.tar.xz: connection reset");
}

TEST_CASE("modes from the archive are sanitized: 0755 or 0644, no special bits") {
  CHECK(install::sanitized_mode(AE_IFDIR, 01777) == 0755);
  CHECK(install::sanitized_mode(AE_IFDIR, 0700) == 0755);
  CHECK(install::sanitized_mode(AE_IFREG, 04755) == 0755);
  CHECK(install::sanitized_mode(AE_IFREG, 02711) == 0755);
  CHECK(install::sanitized_mode(AE_IFREG, 0100) == 0755);
  CHECK(install::sanitized_mode(AE_IFREG, 0666) == 0644);
  CHECK(install::sanitized_mode(AE_IFREG, 04600) == 0644);

  TempDir tmp;
  const auto archive = make_archive({dir_entry(top), dir_entry(top + "/share"),
                                     Entry{top + "/share/sticky", "", AE_IFDIR, 01777, "", false},
                                     file_entry(top + "/bin/suid", "#!/bin/sh\n", 04755),
                                     file_entry(top + "/bin/world", "#!/bin/sh\n", 0777),
                                     file_entry(top + "/include/world.h", "", 0666),
                                     file_entry(top + "/lib/private.so", "elf", 0600)});
  REQUIRE(extract_bytes(archive, tmp.path()));
  const auto mode = [&](const char* path) {
    struct stat st {};
    REQUIRE(::lstat((tmp.path() / path).c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  CHECK(mode("bin/suid") == 0755);
  CHECK(mode("bin/world") == 0755);
  CHECK(mode("include/world.h") == 0644);
  CHECK(mode("lib/private.so") == 0644);
  CHECK(mode("share/sticky") == 0755);
}

TEST_CASE("unpacked bytes are capped: a small archive of large entries stops at the cap") {
  CHECK(install::default_unpacked_cap(1000) == std::uint64_t{1} << 30);
  CHECK(install::default_unpacked_cap(std::uint64_t{100} << 20) == std::uint64_t{6400} << 20);
  TempDir tmp;
  const std::string zeros(1 << 20, '\0');
  const auto archive =
      make_archive({dir_entry(top), file_entry(top + "/a.bin", zeros),
                    file_entry(top + "/b.bin", zeros), file_entry(top + "/c.bin", zeros)},
                   Filter::xz);
  CHECK(archive.size() < 10000);
  REQUIRE(extract_bytes(archive, tmp.path() / "roomy", "cuda_nvcc", 4 << 20));
  auto capped = extract_bytes(archive, tmp.path() / "capped", "cuda_nvcc", (2 << 20) + 10);
  REQUIRE_FALSE(capped);
  CHECK(capped.error().kind == ErrorKind::integrity);
  CHECK(capped.error().message ==
        "test.tar unpacks to more than 2097162 bytes, the cap for its size "
        "(CUDAENV_MAX_UNPACKED_BYTES)");
  CHECK_FALSE(fs::exists(tmp.path() / "capped" / "c.bin"));
}

TEST_CASE("a path thousands of directories deep is refused at once, in memory linear in depth") {
  // 8000 names (16 KB) in one pax header: before, the walks over the unpacked tree took memory
  // quadratic in the depth (3.3 GB); now the entry is refused before anything is written.
  TempDir tmp;
  const auto deep = top + "/" + repeated("d/", 8000) + "f";
  check_damage(extract_bytes(make_archive({dir_entry(top), file_entry(deep, "x")}, Filter::xz),
                             tmp.path() / "p"),
               text::printable(deep, 400), "path longer than 1024 bytes");
  CHECK_FALSE(fs::exists(tmp.path() / "p" / "d"));
  // Short names, deeper than the cap: refused by depth.
  const auto nested = top + "/" + repeated("d/", 64) + "f";
  check_damage(
      extract_bytes(make_archive({dir_entry(top), file_entry(nested, "x")}), tmp.path() / "q"),
      nested, "65 names deep, more than the 64 an archive may nest");
  CHECK_FALSE(fs::exists(tmp.path() / "q" / "d"));
  // At the cap exactly: fine.
  const auto at_cap = top + "/" + repeated("d/", 63) + "f";
  REQUIRE(extract_bytes(make_archive({dir_entry(top), file_entry(at_cap, "x")}), tmp.path() / "r"));
  CHECK(fs::exists(tmp.path() / "r" / repeated("d/", 63) / "f"));
}

TEST_CASE("the entries of an archive are capped, the directories they imply included") {
  TempDir tmp;
  std::vector<Entry> entries = {dir_entry(top)};
  for (int i = 0; i < 10; ++i)
    entries.push_back(file_entry(top + "/bin/f" + std::to_string(i), "x"));
  install::ExtractOptions options;
  options.max_entries = 10;
  options.destination = tmp.path() / "headers";
  // 11 headers (the top directory counts): one too many.
  check_damage(extract_with(make_archive(entries), options), top + "/bin/f9",
               "more than 10 entries, the most an archive may hold");
  options.max_entries = 12;
  options.destination = tmp.path() / "implied";
  // 3 headers, 13 names: a/b/c/.../f implies its directories.
  check_damage(extract_with(make_archive({dir_entry(top),
                                          file_entry(top + "/" + repeated("a/", 12) + "f", "x"),
                                          file_entry(top + "/g", "x")}),
                            options),
               top + "/" + repeated("a/", 12) + "f",
               "more than 12 files, links and directories, the most an archive may hold");
}

TEST_CASE("an entry that does not fit the entries before it is archive damage, not a disk error") {
  struct Case {
    std::string what;
    std::vector<Entry> entries;
    std::string named;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"a file below a regular file (ENOTDIR on disk)",
       {file_entry(top + "/lib/x", "x"), file_entry(top + "/lib/x/libx.so", "y")},
       top + "/lib/x/libx.so",
       "below the regular file lib/x of the same archive"},
      {"a file below a link",
       {dir_entry(top + "/real"), symlink_entry(top + "/lib", "real"),
        file_entry(top + "/lib/libx.so", "y")},
       top + "/lib/libx.so",
       "below the symbolic link lib of the same archive"},
      {"a file below a dangling link, deeper",
       {symlink_entry(top + "/a/l", "nowhere"), file_entry(top + "/a/l/b/c", "y")},
       top + "/a/l/b/c",
       "below the symbolic link a/l of the same archive"},
      {"a directory below a hard link",
       {file_entry(top + "/a/f", "x"), hardlink_entry(top + "/a/h", top + "/a/f"),
        dir_entry(top + "/a/h/d")},
       top + "/a/h/d/",  // libarchive writes a directory's name with a slash
       "below the regular file a/h of the same archive"},
      {"a file replacing a directory (ENOTEMPTY on disk)",
       {dir_entry(top + "/a/d"), file_entry(top + "/a/d/in", "x"), file_entry(top + "/a/d", "y")},
       top + "/a/d",
       "a file or link where the archive has a directory of the same name"},
      {"a link replacing an implied directory",
       {file_entry(top + "/d/in", "x"), symlink_entry(top + "/d", "elsewhere")},
       top + "/d",
       "a file or link where the archive has a directory of the same name"},
      {"a directory replacing a file (which libarchive would delete)",
       {file_entry(top + "/a/f", "x"), dir_entry(top + "/a/f")},
       top + "/a/f/",
       "a directory where the archive has a file or link of the same name"},
      {"a name longer than NAME_MAX (ENAMETOOLONG on disk)",
       {file_entry(top + "/" + std::string(300, 'n'), "x")},
       top + "/" + std::string(300, 'n'),
       "a name longer than 255 bytes"},
      {"a hard link to a directory",
       {dir_entry(top + "/d"), hardlink_entry(top + "/h", top + "/d")},
       top + "/h",
       "hard link to " + top + "/d, which is not a file earlier in the archive"},
      {"a hard link to a later file",
       {hardlink_entry(top + "/a/h", top + "/a/f"), file_entry(top + "/a/f", "x")},
       top + "/a/h",
       "hard link to " + top + "/a/f, which is not a file earlier in the archive"},
      {"a hard link to a top-level file (which moves to the licenses)",
       {file_entry(top + "/NOTICE", "x"), hardlink_entry(top + "/a/h", top + "/NOTICE")},
       top + "/a/h",
       "hard link to " + top + "/NOTICE, which is not a file earlier in the archive"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    TempDir tmp;
    std::vector<Entry> entries = {dir_entry(top)};
    entries.insert(entries.end(), c.entries.begin(), c.entries.end());
    const auto result = extract_bytes(make_archive(entries), tmp.path() / "p");
    check_damage(result, c.named, c.why);
    if (!result.ok()) CHECK(result.error().hint.find("nothing was installed") != std::string::npos);
  }
}

TEST_CASE("an entry that does not fit what another archive put there is archive damage") {
  // Two archives of one install share the prefix: the second finds a file where it needs a
  // directory. The system says ENOTDIR; that is the archive's fault, not the disk's.
  TempDir tmp;
  const auto dest = tmp.path() / "prefix";
  REQUIRE(extract_bytes(make_archive({file_entry("a-archive/include/x", "x")}), dest, "comp_a"));
  const auto second =
      extract_bytes(make_archive({file_entry("b-archive/include/x/b.h", "b")}), dest, "comp_b");
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().kind == ErrorKind::integrity);
  CHECK(second.error().message.find(
            "corrupt or hostile archive: test.tar: b-archive/include/x/b.h: ") == 0);
  CHECK(second.error().hint.find("free space") == std::string::npos);
  CHECK(slurp(dest / "include/x") == "x");
}
