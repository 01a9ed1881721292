#include "scan/ld_cache.hpp"

#include <cstring>
#include <string_view>

#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace {

constexpr std::string_view new_magic = "glibc-ld.so.cache1.1";
constexpr std::string_view old_magic = "ld.so-1.7.0";
constexpr size_t new_header_size = 48, new_entry_size = 24;
constexpr size_t old_header_size = 16, old_entry_size = 12;

template <typename T>
T read_at(Bytes bytes, size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

Error bad(const std::string& what) {
  return make_error(ErrorKind::failure, "not a valid ld.so cache: " + what);
}

bool starts_with(Bytes bytes, size_t at, std::string_view magic) {
  return bytes.size() >= at && bytes.size() - at >= magic.size() &&
         std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
}

// Where the new-format table starts: at 0, or after the old table (8-byte aligned).
Result<size_t> new_table_start(Bytes image) {
  if (starts_with(image, 0, new_magic)) return size_t{0};
  if (!starts_with(image, 0, old_magic) || image.size() < old_header_size)
    return bad("no glibc-ld.so.cache1.1 header");
  const uint64_t old_count = read_at<uint32_t>(image, 12);
  const uint64_t end = old_header_size + old_count * old_entry_size;
  const uint64_t aligned = (end + 7) & ~uint64_t{7};
  if (aligned > image.size() || !starts_with(image, aligned, new_magic))
    return bad("no glibc-ld.so.cache1.1 table after the old one");
  return static_cast<size_t>(aligned);
}

// ldconfig stores file names and absolute paths; anything longer is not a cache it wrote.
constexpr size_t max_soname = 255, max_path = 4096;

Result<std::string_view> string_at(Bytes table, uint64_t offset, size_t limit, ParseBudget& budget,
                                   uint64_t entry) {
  const auto found = string_in(table, offset, budget);
  if (found.outcome == TableString::Outcome::over_budget)
    return bad("its entries name strings read over and over (more than " +
               std::to_string(ParseBudget::image_multiple) +
               " times the file's size): a crafted file");
  if (found.outcome == TableString::Outcome::outside)
    return bad("entry " + std::to_string(entry) + " names a string outside the file");
  if (found.text.size() > limit)
    return bad("entry " + std::to_string(entry) + " names a string longer than " +
               std::to_string(limit) + " bytes");
  return found.text;
}

}  // namespace

Result<std::vector<LdCacheView>> parse_ld_cache(Bytes image) {
  const auto start = new_table_start(image);
  if (!start) return start.error();
  const auto table = image.subspan(*start);
  if (table.size() < new_header_size) return bad("truncated header");
  const uint64_t count = read_at<uint32_t>(table, 20);
  if (count > (table.size() - new_header_size) / new_entry_size)
    return bad(std::to_string(count) + " entries do not fit in the file");
  ParseBudget budget(image.size());
  std::vector<LdCacheView> entries;
  entries.reserve(count);  // checked above: at most one per 24 bytes of the file
  for (uint64_t i = 0; i < count; ++i) {
    const auto at = new_header_size + i * new_entry_size;
    // String offsets in the new format count from the start of its own header.
    auto soname = string_at(table, read_at<uint32_t>(table, at + 4), max_soname, budget, i);
    if (!soname) return soname.error();
    auto path = string_at(table, read_at<uint32_t>(table, at + 8), max_path, budget, i);
    if (!path) return path.error();
    entries.push_back({*soname, *path, read_at<uint32_t>(table, at)});
  }
  return entries;
}

bool entry_for_this_machine(uint32_t flags) {
  constexpr uint32_t type_mask = 0x00ff, requirement_mask = 0xff00, elf_libc6 = 0x0003;
#if defined(__x86_64__)
  constexpr uint32_t this_machine = 0x0300;  // FLAG_X8664_LIB64
#elif defined(__aarch64__)
  constexpr uint32_t this_machine = 0x0a00;  // FLAG_AARCH64_LIB64
#else
  constexpr uint32_t this_machine = 0;
#endif
  return (flags & type_mask) == elf_libc6 && (flags & requirement_mask) == this_machine;
}

std::vector<LdCacheEntry> read_ld_cache_file(const std::string& host_path, std::string& problem) {
  auto file = MappedFile::open(host_path);
  if (!file) {
    problem = file.error().message;
    return {};
  }
  auto entries = parse_ld_cache(file->bytes());
  if (!entries) {
    problem = host_path + ": " + entries.error().message;
    return {};
  }
  std::vector<LdCacheEntry> ours;
  for (const auto& entry : *entries)
    if (entry_for_this_machine(entry.flags))
      ours.push_back({std::string(entry.soname), std::string(entry.path), entry.flags});
  return ours;
}

}  // namespace cudaenv::scan
