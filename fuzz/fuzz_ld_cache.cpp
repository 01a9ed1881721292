// The dynamic loader's cache (/etc/ld.so.cache, under CUDAENV_SYSROOT a file anyone may have
// written): entries are views into the input, no more than fit, with names no longer than
// ldconfig writes.

#include <span>

#include "fuzz_input.hpp"
#include "scan/ld_cache.hpp"

using namespace cudaenv;

namespace {

bool inside(std::span<const unsigned char> image, std::string_view text) {
  const auto* begin = reinterpret_cast<const char*>(image.data());
  return text.data() >= begin && text.data() + text.size() <= begin + image.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> image(data, size);
  const auto entries = scan::parse_ld_cache(image);
  if (!entries) {
    fuzz::require(!entries.error().message.empty(), "an error says what is wrong");
    return 0;
  }
  fuzz::require(entries->size() <= size / 24, "no more cache entries than fit in the input");
  for (const auto& entry : *entries) {
    fuzz::require(inside(image, entry.soname) && inside(image, entry.path),
                  "an entry's names are views into the input");
    fuzz::require(entry.soname.size() <= 255 && entry.path.size() <= 4096,
                  "names no longer than NAME_MAX and PATH_MAX");
    (void)scan::entry_for_this_machine(entry.flags);
  }
  return 0;
}
