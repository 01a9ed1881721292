#include "resolve/toolkit_identity.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace cudaenv::resolve {

namespace {

// What orders toolkits: the release, the newest it may be, or nvcc's version as a last resort
// (a compiler newer than the database belongs to a release at least as new as its major.minor).
Version sort_key(const probe::ToolkitFacts& toolkit) {
  const auto releases = possible_releases(toolkit);
  if (!releases.empty()) return releases.back();
  return toolkit.version.value_or(Version{});
}

// "13.0.88" or "==13.0.88": the one version an exact spec names.
std::optional<Version> exact_version(const VersionSpec& spec) {
  if (!spec.is_exact_beyond(2)) return std::nullopt;
  auto text = std::string_view(spec.str());
  while (!text.empty() && text.front() == '=') text.remove_prefix(1);
  return Version::parse(text);
}

}  // namespace

std::vector<Version> releases_shipping(const manifest::Database& db, const Version& nvcc,
                                       const std::optional<Version>& cudart) {
  std::vector<Version> all, with_cudart;
  std::vector<Version> cudarts_seen;
  for (const auto& release : db.cuda_releases) {  // oldest first
    if (!release.nvcc || *release.nvcc != nvcc) continue;
    // A later redist label shipping the same nvcc and cudart (13.0.3 after 13.0.2) is the
    // same toolkit: it is known by the release that first shipped them.
    if (release.cudart) {
      if (std::find(cudarts_seen.begin(), cudarts_seen.end(), *release.cudart) !=
          cudarts_seen.end())
        continue;
      cudarts_seen.push_back(*release.cudart);
    }
    all.push_back(release.version);
    if (cudart && release.cudart && *release.cudart == *cudart)
      with_cudart.push_back(release.version);
  }
  return with_cudart.empty() ? all : with_cudart;
}

void name_toolkits(const manifest::Database& db, std::vector<probe::ToolkitFacts>& toolkits) {
  for (auto& toolkit : toolkits) {
    if (toolkit.release_known || !toolkit.nvcc_version) continue;
    auto releases = releases_shipping(db, *toolkit.nvcc_version, toolkit.cudart_version);
    if (releases.size() == 1) {
      toolkit.version = releases.front();
      toolkit.release_known = true;
    } else {
      toolkit.candidate_releases = std::move(releases);
    }
  }
  std::stable_sort(toolkits.begin(), toolkits.end(), [](const auto& a, const auto& b) {
    return a.version && (!b.version || sort_key(a) > sort_key(b));
  });
}

std::vector<Version> possible_releases(const probe::ToolkitFacts& toolkit) {
  // Without nvcc's version, a version can only have come from a release record.
  if (toolkit.version && (toolkit.release_known || !toolkit.nvcc_version))
    return {*toolkit.version};
  return toolkit.candidate_releases;
}

std::string toolkit_name(const probe::ToolkitFacts& toolkit) {
  const auto releases = possible_releases(toolkit);
  std::vector<std::string> names;
  for (const auto& release : releases) names.push_back(release.str());
  const auto nvcc = toolkit.nvcc_version;
  if (names.empty()) {
    if (nvcc) return "nvcc " + nvcc->str() + " (release unknown)";
    return toolkit.version ? toolkit.version->str() : "?";
  }
  auto name = text::join(names, " or ");
  if (nvcc && (releases.size() > 1 || *nvcc != releases.front()))
    name += " (nvcc " + nvcc->str() + ")";
  return name;
}

std::string install_spec(const manifest::Database& db, const VersionSpec& spec) {
  const auto exact = exact_version(spec);
  if (!exact) return spec.str();
  const bool is_release =
      std::any_of(db.cuda_releases.begin(), db.cuda_releases.end(),
                  [&](const auto& release) { return release.version == *exact; });
  if (is_release) return spec.str();
  const auto releases = releases_shipping(db, *exact, std::nullopt);
  return releases.empty() ? spec.str() : releases.back().str();
}

bool database_knows(const manifest::Database& db, const VersionSpec& spec) {
  const auto exact = exact_version(spec);
  return std::any_of(db.cuda_releases.begin(), db.cuda_releases.end(), [&](const auto& release) {
    return spec.matches(release.version) || (exact && release.nvcc && *release.nvcc == *exact);
  });
}

}  // namespace cudaenv::resolve
