#include "scan/elf.hpp"

#include <cstring>

namespace cudaenv::scan {

namespace {

constexpr uint32_t section_type_dynamic = 6;
constexpr uint32_t section_type_nobits = 8;
constexpr int64_t tag_needed = 1, tag_soname = 14, tag_rpath = 15, tag_runpath = 29;
constexpr size_t header_size = 64, section_header_size = 64, dynamic_entry_size = 16;
constexpr size_t symbol_entry_size = 24;
// Far more sections than any real library has; a crafted count cannot make us allocate much.
constexpr uint64_t max_sections = 65536;

template <typename T>
T read_at(Bytes image, uint64_t offset) {
  T value{};
  std::memcpy(&value, image.data() + offset, sizeof(T));
  return value;
}

bool in_bounds(Bytes image, uint64_t offset, uint64_t size) {
  return offset <= image.size() && size <= image.size() - offset;
}

Error bad(const std::string& what) {
  return make_error(ErrorKind::failure, "not a valid ELF: " + what);
}

Error over_budget(std::string_view table) {
  return bad("the names in " + std::string(table) + " would be read over and over (more than " +
             std::to_string(ParseBudget::image_multiple) +
             " times the file's size): a crafted file");
}

Result<std::vector<ElfSection>> read_sections(Bytes image, ParseBudget& budget) {
  const auto table = read_at<uint64_t>(image, 0x28);
  const auto entry_size = read_at<uint16_t>(image, 0x3A);
  const uint64_t count = read_at<uint16_t>(image, 0x3C);
  const auto names_index = read_at<uint16_t>(image, 0x3E);
  if (count == 0) return std::vector<ElfSection>{};
  if (entry_size != section_header_size)
    return bad("section header size " + std::to_string(entry_size));
  if (count > max_sections || !in_bounds(image, table, count * section_header_size))
    return bad("section headers lie outside the file");
  std::vector<ElfSection> sections(count);
  for (uint64_t i = 0; i < count; ++i) {
    const auto at = table + i * section_header_size;
    sections[i] = {{},
                   read_at<uint32_t>(image, at + 4),
                   read_at<uint64_t>(image, at + 0x18),
                   read_at<uint64_t>(image, at + 0x20),
                   read_at<uint32_t>(image, at + 0x28),
                   read_at<uint64_t>(image, at + 8),
                   read_at<uint64_t>(image, at + 0x10)};
  }
  if (names_index >= count) return bad("section name table index out of range");
  const auto names = section_bytes(image, sections[names_index]);
  if (!names) return bad("section name table lies outside the file");
  for (uint64_t i = 0; i < count; ++i) {
    const auto name_offset = read_at<uint32_t>(image, table + i * section_header_size);
    const auto name = string_in(*names, name_offset, budget);
    if (name.outcome == TableString::Outcome::over_budget)
      return over_budget("the section name table");
    sections[i].name = name.text;  // a name outside the table reads as none
  }
  return sections;
}

Status read_dynamic(Bytes image, const ElfSection& dynamic, const std::vector<ElfSection>& all,
                    ParseBudget& budget, ElfInfo& info) {
  const auto entries = section_bytes(image, dynamic);
  if (!entries) return bad("dynamic section lies outside the file");
  if (dynamic.link >= all.size()) return bad("dynamic string table index out of range");
  const auto strings = section_bytes(image, all[dynamic.link]);
  if (!strings) return bad("dynamic string table lies outside the file");
  for (size_t at = 0; at + dynamic_entry_size <= entries->size(); at += dynamic_entry_size) {
    const auto tag = read_at<int64_t>(*entries, at);
    if (tag == 0) break;  // DT_NULL ends the table
    if (tag != tag_needed && tag != tag_soname && tag != tag_rpath && tag != tag_runpath) continue;
    const auto value = string_in(*strings, read_at<uint64_t>(*entries, at + 8), budget);
    if (value.outcome == TableString::Outcome::over_budget)
      return over_budget("the dynamic string table");
    if (value.outcome == TableString::Outcome::outside)
      return bad("dynamic entry names a string outside its table");
    if (tag == tag_needed) info.needed.push_back(value.text);
    if (tag == tag_soname) info.soname = value.text;
    if (tag == tag_rpath) info.rpath = value.text;
    if (tag == tag_runpath) {
      info.runpath = value.text;
      info.has_runpath = true;
    }
  }
  return Ok{};
}

}  // namespace

const ElfSection* ElfInfo::section(std::string_view name) const {
  for (const auto& candidate : sections) {
    if (candidate.name == name) return &candidate;
  }
  return nullptr;
}

bool is_elf(Bytes image) {
  return image.size() >= 4 && std::memcmp(image.data(),
                                          "\x7f"
                                          "ELF",
                                          4) == 0;
}

std::optional<Bytes> section_bytes(Bytes image, const ElfSection& section) {
  if (section.type == section_type_nobits || !in_bounds(image, section.offset, section.size))
    return std::nullopt;
  return image.subspan(section.offset, section.size);
}

Result<ElfInfo> parse_elf(Bytes image) {
  if (!is_elf(image)) return bad("no ELF magic");
  if (image.size() < header_size) return bad("truncated header");
  if (image[4] != 2) return bad("not a 64-bit ELF (only 64-bit libraries are scanned)");
  if (image[5] != 1) return bad("not a little-endian ELF");
  ParseBudget budget(image.size());
  auto sections = read_sections(image, budget);
  if (!sections) return sections.error();
  ElfInfo info;
  info.sections = std::move(*sections);
  for (const auto& section : info.sections) {
    if (section.type != section_type_dynamic) continue;
    if (auto status = read_dynamic(image, section, info.sections, budget, info); !status)
      return status.error();
    break;
  }
  return info;
}

Status for_each_symbol(Bytes image, const ElfInfo& info, std::string_view table,
                       const std::function<bool(const ElfSymbol&)>& visit) {
  const auto* symbols = info.section(table);
  if (!symbols) return Ok{};
  const auto entries = section_bytes(image, *symbols);
  if (!entries) return bad(std::string(table) + " lies outside the file");
  if (symbols->link >= info.sections.size()) return bad("symbol string table index out of range");
  const auto names = section_bytes(image, info.sections[symbols->link]);
  if (!names) return bad("symbol string table lies outside the file");
  ParseBudget budget(image.size());
  for (size_t at = 0; at + symbol_entry_size <= entries->size(); at += symbol_entry_size) {
    const auto name = string_in(*names, read_at<uint32_t>(*entries, at), budget);
    if (name.outcome == TableString::Outcome::over_budget)
      return over_budget("the string table of " + std::string(table));
    const ElfSymbol symbol{name.text,
                           static_cast<uint8_t>(read_at<uint8_t>(*entries, at + 4) & 0xf),
                           read_at<uint16_t>(*entries, at + 6), read_at<uint64_t>(*entries, at + 8),
                           read_at<uint64_t>(*entries, at + 16)};
    if (!visit(symbol)) break;
  }
  return Ok{};
}

std::optional<Bytes> symbol_bytes(Bytes image, const ElfInfo& info, const ElfSymbol& symbol) {
  if (symbol.section == 0 || symbol.section >= info.sections.size()) return std::nullopt;
  const auto& section = info.sections[symbol.section];
  const auto bytes = section_bytes(image, section);
  if (!bytes || symbol.value < section.address) return std::nullopt;
  const auto at = symbol.value - section.address;
  if (at > bytes->size() || symbol.size > bytes->size() - at) return std::nullopt;
  return bytes->subspan(at, symbol.size);
}

}  // namespace cudaenv::scan
