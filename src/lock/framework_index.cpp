#include "lock/framework_index.hpp"

#include "core/text.hpp"

namespace cudaenv::lock {

namespace {

bool served_by_pypi(const FrameworkRequirement& requirement) {
  return requirement.index_url == fetch::pypi_index_url;
}

// How to point the lock at another index for this requirement: "... a mirror of X <which>".
std::string mirror_hint(const FrameworkRequirement& requirement, const std::string& which) {
  if (served_by_pypi(requirement))
    return "point PIP_INDEX_URL (or index_url in the config) at a PyPI mirror " + which;
  const auto base = requirement.index_url.substr(0, requirement.index_url.rfind('/'));
  return "point CUDAENV_FRAMEWORK_INDEX (or framework_index in the config) at a mirror of " + base +
         " " + which;
}

std::string where(const FrameworkRequirement& requirement, const FrameworkIndexes& indexes) {
  const auto url = lookup_url(requirement, indexes);
  std::string origin;
  if (served_by_pypi(requirement)) {
    origin = indexes.pypi_origin;
  } else if (!indexes.build_index_base.empty()) {
    origin = indexes.build_index_origin;
  }
  return "the index " + text::printable(url, text::message_limit) +
         (origin.empty() ? "" : " (" + origin + ")");
}

Error unreadable(const FrameworkRequirement& requirement, const FrameworkIndexes& indexes,
                 const Error& cause) {
  if (cause.kind == ErrorKind::not_found)
    return make_error(ErrorKind::not_found,
                      requirement.name + ": " + where(requirement, indexes) + " has no project " +
                          requirement.project,
                      mirror_hint(requirement, "that carries it"));
  return make_error(
      cause.kind,
      requirement.name + ": cannot read " + where(requirement, indexes) + ": " + cause.message,
      mirror_hint(requirement, "this machine reaches") + ", then run cudaenv lock again");
}

Error nothing_fits(const FrameworkRequirement& requirement, const FrameworkIndexes& indexes,
                   const std::vector<fetch::IndexFile>& files) {
  const auto offered = offered_versions(requirement, files, 6);
  return make_error(ErrorKind::not_found,
                    requirement.name + ": no Linux x86-64 wheel of " + requirement.project + " " +
                        describe(requirement) + " on " + where(requirement, indexes),
                    (offered.empty() ? "it has no Linux x86-64 wheel of " + requirement.project
                                     : "newest there: " + text::join(offered, ", ")) +
                        "; change " + requirement.name + " in .cudaenv, or " +
                        mirror_hint(requirement, "that carries the build"));
}

}  // namespace

std::string lookup_url(const FrameworkRequirement& requirement, const FrameworkIndexes& indexes) {
  if (served_by_pypi(requirement)) return indexes.pypi;
  if (indexes.build_index_base.empty()) return requirement.index_url;
  // The build's own part of the index (its last path segment, "cu124") below the mirror's base.
  auto upstream = text::without_trailing_slashes(requirement.index_url);
  return indexes.build_index_base + upstream.substr(upstream.rfind('/'));
}

Result<std::map<std::string, LockedFramework>> lock_frameworks(
    const std::vector<FrameworkRequirement>& requirements, const FrameworkIndexes& indexes) {
  std::map<std::string, LockedFramework> out;
  for (const auto& requirement : requirements) {
    const auto url = lookup_url(requirement, indexes);
    auto files = fetch::fetch_project_files(url, requirement.project, indexes.fetch);
    if (!files) return unreadable(requirement, indexes, files.error());
    const auto pick = newest_fit(requirement, *files);
    if (!pick) return nothing_fits(requirement, indexes, *files);
    out.emplace(requirement.name, pinned(requirement, *pick));
  }
  return out;
}

}  // namespace cudaenv::lock
