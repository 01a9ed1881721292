// ELF files a scan reads: sections, the dynamic section, symbol tables and the fatbinaries in
// them. Parsing never reads outside the input, every name is a view into it (nothing copied per
// entry), and whatever parses gives answers that stay inside it.

#include <span>

#include "fuzz_input.hpp"
#include "scan/elf.hpp"
#include "scan/fatbin.hpp"

using namespace cudaenv;

namespace {

bool inside(std::span<const unsigned char> image, std::string_view text) {
  const auto* begin = reinterpret_cast<const char*>(image.data());
  return text.empty() ||
         (text.data() >= begin && text.data() + text.size() <= begin + image.size());
}

void check_symbols(std::span<const unsigned char> image, const scan::ElfInfo& elf,
                   std::string_view table) {
  (void)scan::for_each_symbol(image, elf, table, [&](const scan::ElfSymbol& symbol) {
    fuzz::require(inside(image, symbol.name), "a symbol's name is a view into the input");
    if (const auto bytes = scan::symbol_bytes(image, elf, symbol)) {
      fuzz::require(bytes->size() == symbol.size, "a symbol's bytes are its size");
      fuzz::require(bytes->data() >= image.data() &&
                        bytes->data() + bytes->size() <= image.data() + image.size(),
                    "a symbol's bytes lie in the input");
    }
    return true;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> image(data, size);
  const auto elf = scan::parse_elf(image);
  if (!elf) return 0;
  fuzz::require(elf->sections.size() <= size / 64, "no more sections than headers fit");
  for (const auto& section : elf->sections) {
    fuzz::require(inside(image, section.name), "a section's name is a view into the input");
    const auto bytes = scan::section_bytes(image, section);
    fuzz::require(!bytes || bytes->size() == section.size, "a section's bytes are its size");
    if (bytes) (void)scan::parse_fatbin_section(*bytes);
  }
  for (const auto& needed : elf->needed)
    fuzz::require(inside(image, needed), "DT_NEEDED is a view into the input");
  fuzz::require(
      inside(image, elf->rpath) && inside(image, elf->runpath) && inside(image, elf->soname),
      "DT_RPATH, DT_RUNPATH and DT_SONAME are views into the input");
  check_symbols(image, *elf, ".dynsym");
  check_symbols(image, *elf, ".symtab");
  return 0;
}
