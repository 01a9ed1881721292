// Binaries a scan reads: the input is an ELF file, a fatbinary or an ld.so cache. Parsing never
// reads outside the input, and whatever parses gives answers that stay inside it.

#include <span>

#include "fuzz_input.hpp"
#include "scan/elf.hpp"
#include "scan/fatbin.hpp"
#include "scan/ld_cache.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> image(data, size);
  if (auto elf = scan::parse_elf(image)) {
    for (const auto& section : elf->sections) {
      const auto bytes = scan::section_bytes(image, section);
      fuzz::require(!bytes || bytes->size() == section.size, "a section's bytes are its size");
      if (bytes) (void)scan::parse_fatbin_section(*bytes);
    }
  }
  if (auto codes = scan::parse_fatbin_section(image)) {
    for (const auto& code : *codes)
      fuzz::require(code.arch >= 10 && code.arch <= 999, "arch in range");
  }
  (void)scan::find_embedded_fatbins(image);
  if (auto entries = scan::parse_ld_cache(image))
    fuzz::require(entries->size() <= size / 24, "no more cache entries than fit in the input");
  return 0;
}
