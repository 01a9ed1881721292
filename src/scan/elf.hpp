#pragma once
// Reading an ELF shared library or executable: its sections and its dynamic section. Every
// file is untrusted (a scan walks whatever a site-packages tree holds): each offset and size is
// checked against the image, and a truncated or crafted file gives an error value, never a read
// outside the image.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
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
};

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

// The bytes of a section, or nothing when it has none in the file (SHT_NOBITS) or lies outside.
std::optional<Bytes> section_bytes(Bytes image, const ElfSection& section);

}  // namespace cudaenv::scan
