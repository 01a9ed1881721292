#pragma once
// Reading an ELF shared library or executable: its sections and its dynamic section. Every
// file is untrusted (a scan walks whatever a site-packages tree holds): each offset and size is
// checked against the image, and a truncated or crafted file gives an error value, never a read
// outside the image.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::scan {

using Bytes = std::span<const unsigned char>;

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;  // in the file
  uint64_t size = 0;
  uint32_t link = 0;
  uint64_t flags = 0;    // SHF_*: 0x4 marks executable code
  uint64_t address = 0;  // where it is mapped (symbol values are addresses)
};

constexpr uint64_t section_flag_exec = 0x4;

struct ElfSymbol {
  std::string name;
  uint8_t type = 0;  // STT_*: 1 data object, 2 function
  uint16_t section = 0;
  uint64_t value = 0;
  uint64_t size = 0;
};
constexpr uint8_t symbol_type_object = 1, symbol_type_function = 2;

struct ElfInfo {
  std::vector<ElfSection> sections;
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string soname;               // DT_SONAME, empty when absent
  std::string rpath;                // DT_RPATH as written (colon-separated), empty when absent
  std::string runpath;              // DT_RUNPATH likewise
  bool has_runpath = false;         // an empty DT_RUNPATH still switches DT_RPATH off

  const ElfSection* section(std::string_view name) const;
};

// True when the image starts with the ELF magic (cheap: lets a walk skip other files).
bool is_elf(Bytes image);

// Parses a 64-bit little-endian ELF image (what x86-64 and aarch64 Linux load). Other classes
// and byte orders, and any header, section or string that lies outside the image, are
// ErrorKind::failure with a message naming what is wrong.
Result<ElfInfo> parse_elf(Bytes image);

// The symbols of a symbol table section (".dynsym", ".symtab"); empty when it is absent. A
// table or name outside the file is ErrorKind::failure.
Result<std::vector<ElfSymbol>> read_symbols(Bytes image, const ElfInfo& info,
                                            std::string_view table);

// The `size` bytes a defined symbol's value points at, through the section that holds it;
// nullopt when that lies outside the section or the file.
std::optional<Bytes> symbol_bytes(Bytes image, const ElfInfo& info, const ElfSymbol& symbol);

// The bytes of a section, or nothing when it has none in the file (SHT_NOBITS) or lies outside.
std::optional<Bytes> section_bytes(Bytes image, const ElfSection& section);

}  // namespace cudaenv::scan
