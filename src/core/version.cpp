#include "core/version.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace cudaenv {

namespace {
// NVIDIA versions components by up to five parts (cuda-toolkit 13.5.0 pins
// nvidia-cuda-cccl 13.3.5.0.6).
constexpr size_t max_components = 6;
constexpr int max_component_value = 999999;
}  // namespace

std::optional<Version> Version::parse(std::string_view text) {
  text = text::trim(text);
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
  const auto parts = text::split(text, '.');
  if (parts.empty() || parts.size() > max_components) return std::nullopt;
  Version version;
  for (const auto& part : parts) {
    const auto value = text::parse_integer(part);
    if (!value || *value > max_component_value) return std::nullopt;
    version.components_.push_back(static_cast<int>(*value));
  }
  version.text_ = std::string(text);
  return version;
}

Version Version::from_cuda_int(int encoded) {
  const int major = encoded / 1000;
  const int minor = (encoded % 1000) / 10;
  return *parse(std::to_string(major) + "." + std::to_string(minor));
}

int Version::component(size_t index) const {
  return index < components_.size() ? components_[index] : 0;
}

Version Version::major_minor() const {
  return *parse(std::to_string(major()) + "." + std::to_string(minor()));
}

bool Version::has_prefix(const Version& prefix) const {
  if (prefix.size() > size()) return false;
  return std::equal(prefix.components_.begin(), prefix.components_.end(), components_.begin());
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  const size_t n = std::max(size(), other.size());
  for (size_t i = 0; i < n; ++i) {
    if (const auto c = component(i) <=> other.component(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

bool Version::operator==(const Version& other) const { return (*this <=> other) == 0; }

Result<VersionSpec> VersionSpec::parse(std::string_view input) {
  const auto text = text::trim(input);
  VersionSpec spec;
  spec.text_ = std::string(text);
  if (text == "latest" || text == "*") return spec;
  if (text.empty()) {
    return make_error(ErrorKind::usage, "empty version spec",
                      "write a version such as 12.4 or a range such as \">=12.1,<12.5\"");
  }
  // Longest tokens first so ">=" is not read as ">".
  static const std::pair<std::string_view, Op> operators[] = {
      {">=", Op::ge}, {"<=", Op::le}, {"==", Op::eq}, {"!=", Op::ne},
      {">", Op::gt},  {"<", Op::lt},  {"=", Op::eq}};
  for (const auto& raw : text::split(text, ',')) {
    std::string_view clause_text = text::trim(raw);
    Op op = Op::prefix;
    for (const auto& [token, candidate] : operators) {
      if (clause_text.starts_with(token)) {
        op = candidate;
        clause_text = text::trim(clause_text.substr(token.size()));
        break;
      }
    }
    const auto version = Version::parse(clause_text);
    if (!version) {
      return make_error(ErrorKind::usage, "invalid version spec \"" + std::string(text) + "\"",
                        "write a version such as 12.4 or a range such as \">=12.1,<12.5\"");
    }
    spec.clauses_.push_back({op, *version});
  }
  return spec;
}

bool VersionSpec::matches(const Version& version) const {
  return std::all_of(clauses_.begin(), clauses_.end(), [&](const Clause& clause) {
    switch (clause.op) {
      case Op::prefix: return version.has_prefix(clause.version);
      case Op::eq: return version == clause.version;
      case Op::ne: return version != clause.version;
      case Op::lt: return version < clause.version;
      case Op::le: return version <= clause.version;
      case Op::gt: return version > clause.version;
      case Op::ge: return version >= clause.version;
    }
    return false;
  });
}

bool VersionSpec::matches_series(const Version& series) const {
  return std::all_of(clauses_.begin(), clauses_.end(), [&](const Clause& clause) {
    const bool longer = clause.version.size() > series.size();
    std::vector<int> cut(clause.version.components().begin(),
                         clause.version.components().begin() +
                             static_cast<long>(std::min(clause.version.size(), series.size())));
    std::string cut_text;
    for (int c : cut) cut_text += (cut_text.empty() ? "" : ".") + std::to_string(c);
    const Version bound = *Version::parse(cut_text);
    switch (clause.op) {
      case Op::prefix: return series.has_prefix(bound) || bound.has_prefix(series);
      case Op::eq: return series == bound;
      case Op::ne: return longer || series != bound;
      case Op::lt: return longer ? series <= bound : series < bound;
      case Op::le: return series <= bound;
      case Op::gt: return longer ? series >= bound : series > bound;
      case Op::ge: return series >= bound;
    }
    return false;
  });
}

bool VersionSpec::is_exact_beyond(size_t length) const {
  return clauses_.size() == 1 && (clauses_[0].op == Op::prefix || clauses_[0].op == Op::eq) &&
         clauses_[0].version.size() > length;
}

std::optional<Version> VersionSpec::best_match(const std::vector<Version>& candidates) const {
  std::optional<Version> best;
  for (const auto& candidate : candidates) {
    if (matches(candidate) && (!best || candidate > *best)) best = candidate;
  }
  return best;
}

}  // namespace cudaenv
