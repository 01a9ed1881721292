#include "probe/glibc.hpp"

#include <charconv>
#include <string>

#include "core/text.hpp"

namespace cudaenv::probe {

namespace {

// The number after "#define NAME" on its own line, e.g. "#define __GLIBC_MINOR__ 41".
std::optional<int> defined_number(std::string_view text, std::string_view name) {
  for (const auto& line : text::lines(text)) {
    const auto words = text::split_whitespace(line);
    if (words.size() != 3 || words[0] != "#define" || words[1] != name) continue;
    int value = 0;
    const auto& digits = words[2];
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc() && end == digits.data() + digits.size() && value >= 0 && value < 1000)
      return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Version> parse_glibc_features(std::string_view features_h) {
  const auto major = defined_number(features_h, "__GLIBC__");
  const auto minor = defined_number(features_h, "__GLIBC_MINOR__");
  if (!major || !minor) return std::nullopt;
  return Version::parse(std::to_string(*major) + "." + std::to_string(*minor));
}

std::optional<Version> probe_glibc_headers(const Sysroot& sysroot) {
  const auto text = sysroot.read_file("/usr/include/features.h");
  if (!text) return std::nullopt;
  return parse_glibc_features(*text);
}

}  // namespace cudaenv::probe
