#pragma once
// Shared by the fuzz targets: the input as text, and a check that aborts (so libFuzzer records a
// crash with its input) when a property every input must keep is broken.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace cudaenv::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void require(bool property, const char* what) {
  if (property) return;
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

}  // namespace cudaenv::fuzz
