// scan on hostile input: string tables shared by thousands of entries, ld.so caches with
// absurd names, nested fatbinary containers, and trees too deep, too wide or holding FIFOs.
// Every parse stays within its budget (a fixed multiple of the input) and names are views into
// the input; every walk limit reached is a warning naming the path and the limit.

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "core/text.hpp"
#include "scan/binaries.hpp"
#include "scan/copies.hpp"
#include "scan/elf.hpp"
#include "scan/fatbin.hpp"
#include "scan/ld_cache.hpp"
#include "scan/mapped_file.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::scan;
namespace fs = std::filesystem;

namespace {

using Image = std::vector<unsigned char>;

template <typename T>
void put(Image& image, size_t at, T value) {
  if (image.size() < at + sizeof value) image.resize(at + sizeof value);
  std::memcpy(image.data() + at, &value, sizeof value);
}

void append(Image& image, const std::string& bytes) {
  image.insert(image.end(), bytes.begin(), bytes.end());
}

// A 64-bit ELF whose section name table holds ".shstrtab" and one `name_length`-byte name, and
// `count` sections beside it all named by that one name.
Image elf_with_shared_names(size_t count, size_t name_length) {
  Image image(64);
  std::memcpy(image.data(),
              "\x7f"
              "ELF\x02\x01\x01",
              7);
  const std::string names = std::string(".shstrtab") + '\0' + std::string(name_length, 'A') + '\0';
  append(image, names);
  while (image.size() % 8) image.push_back(0);
  const size_t headers = image.size(), total = count + 2;
  image.resize(headers + 64 * total);
  put<uint32_t>(image, headers + 64 + 4, 3);  // section 1: the name table (SHT_STRTAB)
  put<uint64_t>(image, headers + 64 + 0x18, 64);
  put<uint64_t>(image, headers + 64 + 0x20, names.size());
  for (size_t i = 2; i < total; ++i) {
    put<uint32_t>(image, headers + 64 * i, 10);  // the long name
    put<uint32_t>(image, headers + 64 * i + 4, 1);
  }
  put<uint64_t>(image, 0x28, headers);
  put<uint16_t>(image, 0x3A, 64);
  put<uint16_t>(image, 0x3C, static_cast<uint16_t>(total));
  put<uint16_t>(image, 0x3E, 1);
  return image;
}

bool inside(const Image& image, std::string_view text) {
  const auto* begin = reinterpret_cast<const char*>(image.data());
  return text.data() >= begin && text.data() + text.size() <= begin + image.size();
}

// An ld.so cache whose `count` entries all name `name` (as soname and path).
Image ld_cache(size_t count, const std::string& name) {
  Image image;
  append(image, "glibc-ld.so.cache1.1");
  image.resize(48);
  put<uint32_t>(image, 20, static_cast<uint32_t>(count));
  const auto strings = static_cast<uint32_t>(48 + 24 * count);
  for (size_t i = 0; i < count; ++i) {
    put<uint32_t>(image, 48 + 24 * i, 0x0303);
    put<uint32_t>(image, 48 + 24 * i + 4, strings);
    put<uint32_t>(image, 48 + 24 * i + 8, strings);
  }
  image.resize(strings);
  append(image, name);
  image.push_back(0);
  return image;
}

// `count` entries of an unknown kind, each hiding the header of a container that spans every
// entry after it, the chain broken at its end: a search that retried each would read count²/2.
Image nested_containers(size_t count) {
  Image image(16 + 64 * count + 8);  // the last 8 bytes: too short for an entry header
  put<uint32_t>(image, 0, 0xBA55ED50);
  put<uint16_t>(image, 6, 16);
  put<uint64_t>(image, 8, 64 * count + 8);
  for (size_t k = 0; k < count; ++k) {
    const auto at = 16 + 64 * k;
    put<uint16_t>(image, at, 3);
    put<uint32_t>(image, at + 4, 64);
    put<uint32_t>(image, at + 16, 0xBA55ED50);
    put<uint16_t>(image, at + 22, 48);
    put<uint64_t>(image, at + 24, 64 * (count - k - 1) + 8);
  }
  return image;
}

}  // namespace

TEST_CASE("scan bounds: names are views, and a name table shared by thousands costs the budget") {
  const auto fine = elf_with_shared_names(10, 1000);
  const auto parsed = parse_elf(fine);
  REQUIRE(parsed);
  REQUIRE(parsed->sections.size() == 12);
  CHECK(parsed->sections[5].name.size() == 1000);
  for (const auto& section : parsed->sections)
    CHECK((section.name.empty() || inside(fine, section.name)));

  // 16 000 sections named by one 64 KiB string: 1 GB of names from a 1 MB file.
  const auto crafted = elf_with_shared_names(16000, 65536);
  const auto refused = parse_elf(crafted);
  REQUIRE_FALSE(refused);
  CHECK(text::contains(refused.error().message, "section name table would be read over and over"));
}

TEST_CASE("scan bounds: an ld.so cache with shared, long or endless names is refused") {
  const auto fine = ld_cache(3, "libz.so.1");
  const auto entries = parse_ld_cache(fine);
  REQUIRE(entries);
  REQUIRE(entries->size() == 3);
  CHECK(entries->at(2).soname == "libz.so.1");
  CHECK(inside(fine, entries->at(2).path));

  const auto long_name = parse_ld_cache(ld_cache(1, std::string(300, 'a')));
  REQUIRE_FALSE(long_name);
  CHECK(text::contains(long_name.error().message, "longer than 255 bytes"));

  // 40 000 entries naming one 250-byte string: 20 MB of names from a 1 MB file, over budget.
  const auto shared = parse_ld_cache(ld_cache(40000, std::string(250, 'a')));
  REQUIRE_FALSE(shared);
  CHECK(text::contains(shared.error().message, "read over and over"));

  auto endless = ld_cache(1, "libz.so.1");
  endless.pop_back();  // the last string has no NUL
  CHECK_FALSE(parse_ld_cache(endless));
}

TEST_CASE(
    "scan bounds: nested fatbinary containers among data are read a bounded number of times") {
  const auto nested = nested_containers(40000);  // 2.5 MB: 800 million entry reads unbounded
  const auto found = find_embedded_fatbins(nested);
  REQUIRE_FALSE(found);
  CHECK(text::contains(found.error().message, "read over and over"));
  // Strictly parsed, the broken chain is an error at once.
  CHECK_FALSE(parse_fatbin_section(nested));

  // A compressed entry claiming an absurd decompressed size: only its header is read.
  Image entry(16 + 64 + 8);
  put<uint32_t>(entry, 0, 0xBA55ED50);
  put<uint16_t>(entry, 6, 16);
  put<uint64_t>(entry, 8, 72);
  put<uint16_t>(entry, 16, 2);
  put<uint32_t>(entry, 16 + 4, 64);
  put<uint64_t>(entry, 16 + 8, 8);
  put<uint32_t>(entry, 16 + 28, 90);
  put<uint64_t>(entry, 16 + 40, 0x8000);
  put<uint64_t>(entry, 16 + 56, uint64_t{1} << 62);
  const auto codes = parse_fatbin_section(entry);
  REQUIRE(codes);
  REQUIRE(codes->size() == 1);
  CHECK(codes->front().compressed);
  CHECK(describe(codes->front()) == "sm_90");
}

TEST_CASE("scan bounds: each walk limit reached is a warning naming the path and the limit") {
  test::TempDir dir;
  const auto root = dir.path() / "site";
  fs::path deep = root;
  for (int level = 0; level < 10; ++level) deep /= "d";
  fs::create_directories(deep);
  for (int i = 0; i < 5; ++i) test::write_file(root / ("lib" + std::to_string(i) + ".so"), "x");
  REQUIRE(::mkfifo((root / "pipe.so").c_str(), 0600) == 0);

  const auto shallow = scan_paths({root}, WalkLimits{.max_depth = 4});
  CHECK(shallow.truncated);
  REQUIRE(shallow.warnings.size() == 1);
  CHECK(text::starts_with(shallow.warnings[0], (root / "d/d/d/d/d").string() + ": more than 4"));
  CHECK(text::contains(shallow.warnings[0], "the depth limit"));
  CHECK(shallow.special == std::vector<std::string>{(root / "pipe.so").string() + " (a FIFO)"});
  CHECK(shallow.special_count == 1);

  const auto narrow = scan_paths({root}, WalkLimits{.max_entries = 3});
  REQUIRE(narrow.warnings.size() == 1);
  CHECK(text::contains(narrow.warnings[0], "stopped after 3 entries (the entry limit"));

  const auto few_paths = scan_paths({root}, WalkLimits{.max_path_bytes = 10});
  REQUIRE(few_paths.warnings.size() == 1);
  CHECK(text::starts_with(few_paths.warnings[0], root.string() + ": stopped after"));
  CHECK(text::contains(few_paths.warnings[0], "the path limit"));

  const auto whole = scan_paths({root});
  CHECK_FALSE(whole.truncated);
  CHECK(whole.warnings.empty());
  CHECK(whole.files_seen == 16);  // 10 directories, 5 files, the FIFO
}

TEST_CASE("scan bounds: a file truncated while mapped reads as zeros and says so, never SIGBUS") {
  test::TempDir dir;
  const auto path = dir.path() / "libshrinking.so";
  test::write_file(path, std::string(size_t{3} * 65536, '\xab'));  // whole pages on any page size
  auto mapped = MappedFile::open(path);
  REQUIRE(mapped);
  CHECK_FALSE(mapped->changed());
  // Another process truncates it; the pages past the new end are gone from the mapping.
  fs::resize_file(path, 0);
  const auto bytes = mapped->bytes();
  REQUIRE(bytes.size() == 3 * 65536);
  const volatile unsigned char* last = bytes.data() + bytes.size() - 1;
  CHECK(*last == 0);  // without the guard: SIGBUS, and the scan dies
  CHECK(mapped->changed());
  // A file that stays whole is not flagged, and a mapping made later is guarded afresh.
  const auto steady = dir.path() / "libsteady.so";
  test::write_file(steady, std::string(65536, '\x7f'));
  auto other = MappedFile::open(steady);
  REQUIRE(other);
  CHECK(other->bytes()[65535] == 0x7f);
  CHECK_FALSE(other->changed());
}

TEST_CASE("scan bounds: copy listings stop at their documented caps") {
  test::TempDir dir;
  // A hostile site-packages: more wheel directories under nvidia/ than any real one holds.
  const auto nvidia = dir.path() / "site-packages" / "nvidia";
  for (size_t i = 0; i < max_listed_entries + 10; ++i)
    fs::create_directories(nvidia / ("w" + std::to_string(i)) / "lib");
  const auto directories = wheel_library_directories((dir.path() / "site-packages").string());
  CHECK(directories.size() == max_listed_entries);
  // Each directory holds a copy: only the first max_copy_directories are looked at.
  for (size_t i = 0; i < max_copy_directories + 10; ++i)
    test::write_file(fs::path(directories[i]) / "libcudart.so.13", "x");
  const std::vector<std::string> searched(directories.begin(),
                                          directories.begin() + max_copy_directories + 10);
  CHECK(find_copies("libcudart.so.13", searched).size() == max_copy_directories);
}
