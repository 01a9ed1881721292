#pragma once
// Dotted numeric versions (CUDA 12.4.1, driver 535.104.05, cuDNN 9.1.0.70) and the version
// specs users write ("12", "12.1", ">=12.1,<12.5", "latest").

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cudaenv {

class Version {
 public:
  // Accepts 1 to 4 dot-separated decimal components ("12", "12.4", "535.104.05"); an optional
  // leading "v"/"V" is skipped. Leading zeros are kept for display: drivers print "535.104.05".
  static std::optional<Version> parse(std::string_view text);
  // CUDA encodes versions as 1000*major + 10*minor (cuDriverGetVersion: 12040 -> 12.4).
  static Version from_cuda_int(int encoded);

  const std::vector<int>& components() const { return components_; }
  int major() const { return component(0); }
  int minor() const { return component(1); }
  int patch() const { return component(2); }
  int component(size_t index) const;
  size_t size() const { return components_.size(); }

  // "12.4" from "12.4.131".
  Version major_minor() const;
  // True when this version's components start with all of prefix's (12.4.1 has prefix 12.4).
  bool has_prefix(const Version& prefix) const;
  const std::string& str() const { return text_; }

  // Missing components compare as zero: 12.4 == 12.4.0, and 535.104.05 == 535.104.5.
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const;

 private:
  std::vector<int> components_;
  std::string text_;
};

// A constraint on versions. Grammar:
//   spec       := "latest" | "*" | prefix | comparison ("," comparison)*
//   prefix     := version                 (12.1 matches 12.1, 12.1.0, 12.1.1, ...)
//   comparison := (">=" | "<=" | ">" | "<" | "==" | "=" | "!=") version
class VersionSpec {
 public:
  static Result<VersionSpec> parse(std::string_view input);

  bool matches(const Version& version) const;
  // Whether some version of a release series (PyTorch "2.4" stands for 2.4.0, 2.4.1, ...) can
  // match: clause versions are cut to the series' length, so "2.4.1" and ">=2.4.1" match "2.4".
  bool matches_series(const Version& series) const;
  // True when the spec names one exact version longer than `length` components ("2.4.1").
  bool is_exact_beyond(size_t length) const;
  // The highest candidate the spec matches, or nullopt.
  std::optional<Version> best_match(const std::vector<Version>& candidates) const;
  const std::string& str() const { return text_; }
  bool is_latest() const { return clauses_.empty(); }

 private:
  enum class Op { prefix, eq, ne, lt, le, gt, ge };
  struct Clause {
    Op op;
    Version version;
  };
  std::vector<Clause> clauses_;
  std::string text_;
};

}  // namespace cudaenv
