#pragma once
// Reading an ELF shared library or executable: its sections and its dynamic section. Every
// file is untrusted (a scan walks whatever a site-packages tree holds): each offset and size is
// checked against the image, and a truncated or crafted file gives an error value, never a read
// outside the image. Names are views into the image, never copies, and reading them is charged
// to a ParseBudget (scan/parse_budget.hpp), so a parse costs at most a fixed multiple of the
// image's size whatever its tables claim.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "scan/parse_budget.hpp"

namespace cudaenv::scan {

// The string views below point into the image parsed: valid while it stays mapped.
struct ElfSection {
  std::string_view name;
  uint32_t type = 0;
  uint64_t offset = 0;  // in the file
  uint64_t size = 0;
  uint32_t link = 0;
  uint64_t flags = 0;    // SHF_*: 0x4 marks executable code
  uint64_t address = 0;  // where it is mapped (symbol values are addresses)
};

constexpr uint64_t section_flag_exec = 0x4;

struct ElfSymbol {
  std::string_view name;
  uint8_t type = 0;  // STT_*: 1 data object, 2 function
  uint16_t section = 0;
  uint64_t value = 0;
  uint64_t size = 0;
};
constexpr uint8_t symbol_type_object = 1, symbol_type_function = 2;

struct ElfInfo {
  std::vector<ElfSection> sections;
  std::vector<std::string_view> needed;  // DT_NEEDED, in order
  std::string_view soname;               // DT_SONAME, empty when absent
  std::string_view rpath;                // DT_RPATH as written (colon-separated), empty when absent
  std::string_view runpath;              // DT_RUNPATH likewise
  bool has_runpath = false;              // an empty DT_RUNPATH still switches DT_RPATH off

  const ElfSection* section(std::string_view name) const;
};

// True when the image starts with the ELF magic (cheap: lets a walk skip other files).
bool is_elf(Bytes image);

// Parses a 64-bit little-endian ELF image (what x86-64 and aarch64 Linux load). Other classes
// and byte orders, any header, section or string that lies outside the image, and names that
// would cost more than the image's budget are ErrorKind::failure with a message naming what is
// wrong.
Result<ElfInfo> parse_elf(Bytes image);

// Calls `visit` with each symbol of a symbol table section (".dynsym", ".symtab") in order,
// until it returns false; nothing when the table is absent. Nothing is collected: the symbols
// are read from the image as they are visited. A table or name outside the file, or names past
// the image's budget, are ErrorKind::failure.
Status for_each_symbol(Bytes image, const ElfInfo& info, std::string_view table,
                       const std::function<bool(const ElfSymbol&)>& visit);

// The `size` bytes a defined symbol's value points at, through the section that holds it;
// nullopt when that lies outside the section or the file.
std::optional<Bytes> symbol_bytes(Bytes image, const ElfInfo& info, const ElfSymbol& symbol);

// The bytes of a section, or nothing when it has none in the file (SHT_NOBITS) or lies outside.
std::optional<Bytes> section_bytes(Bytes image, const ElfSection& section);

}  // namespace cudaenv::scan
