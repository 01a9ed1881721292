// Fatbinary containers, as a `.nv_fatbin` section (strict) and among other data (the search
// cuFFT's `.ldata` needs). Nothing is decompressed whatever an entry claims, at most one code
// per 64-byte entry header comes back, and every architecture is in range.

#include <span>

#include "fuzz_input.hpp"
#include "scan/fatbin.hpp"

using namespace cudaenv;

namespace {

void check_codes(const std::vector<scan::GpuCode>& codes, std::size_t size) {
  fuzz::require(codes.size() <= size / 64, "at most one code per entry header");
  for (const auto& code : codes)
    fuzz::require(code.arch >= 10 && code.arch <= 999, "arch in range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> input(data, size);
  if (auto codes = scan::parse_fatbin_section(input)) check_codes(*codes, size);
  if (auto codes = scan::find_embedded_fatbins(input)) check_codes(*codes, size);
  return 0;
}
