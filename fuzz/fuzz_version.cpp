// Versions and version specs: the input is "spec\nversion\nversion...". Parsing never crashes,
// a parsed version re-parses equal from its own text, and matching is consistent.

#include <string>
#include <vector>

#include "core/text.hpp"
#include "core/version.hpp"
#include "fuzz_input.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto lines = text::split(fuzz::as_text(data, size), '\n');
  if (lines.empty()) return 0;
  std::vector<Version> versions;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto version = Version::parse(lines[i]);
    if (!version) continue;
    const auto reparsed = Version::parse(version->str());
    fuzz::require(reparsed && *reparsed == *version, "a version re-parses from its text");
    fuzz::require(version->has_prefix(version->major_minor()) || version->size() < 2,
                  "a version starts with its major.minor");
    versions.push_back(*version);
  }
  auto spec = VersionSpec::parse(lines[0]);
  if (!spec) return 0;
  const auto best = spec->best_match(versions);
  for (const auto& version : versions) {
    const bool matches = spec->matches(version);
    (void)spec->matches_series(version);
    fuzz::require(!matches || (best && *best >= version), "best_match is the highest match");
  }
  (void)spec->is_exact_beyond(2);
  return 0;
}
