#include "lock/lock_vouch.hpp"

#include <map>

#include "core/text.hpp"

namespace cudaenv::lock {

namespace {

Error disagreement(const std::string& lock_path, const std::string& what, const Offer& offer) {
  return make_error(
      ErrorKind::integrity,
      text::printable(lock_path, text::message_limit) + ": " + what + " (" + offer.vouched_by +
          " " + text::printable(offer.manifest_url, text::message_limit) +
          "); nothing was installed",
      "the lock does not pin what the mirror offers as " + offer.release +
          ": do not sync from it; if the mirror is the one you trust, run cudaenv lock and "
          "commit .cudaenv.lock");
}

std::string quoted(const std::string& value) { return "\"" + text::printable(value) + "\""; }

// The first field in which `a` (the lock's) and `b` (the manifest's) differ, as "F: the lock has
// X, the manifest Y"; empty when none does.
std::string first_difference(const LockedArchive& a, const install::SelectedArchive& b) {
  const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
      {"version", {a.version, b.version}},
      {"relative_path", {a.relative_path, b.file.relative_path}},
      {"sha256", {a.sha256, b.file.sha256}},
      {"size", {std::to_string(a.size), std::to_string(b.file.size)}}};
  for (const auto& [name, values] : fields) {
    if (values.first != values.second)
      return std::string(name) + ": the lock has " + quoted(values.first) + ", the source " +
             quoted(values.second);
  }
  return "";
}

}  // namespace

Status check_archives(const std::vector<LockedArchive>& locked, const Offer& offer,
                      const std::string& field, const std::string& lock_path) {
  if (locked.empty())
    return disagreement(
        lock_path, field + ".components: the lock lists no archive of " + offer.release, offer);
  std::map<std::string, const install::SelectedArchive*> offered;
  for (const auto& archive : offer.archives) offered.emplace(archive.component, &archive);
  std::map<std::string, int> seen;
  for (const auto& archive : locked) {
    const auto at = field + ".components." + text::printable(archive.name);
    if (++seen[archive.name] > 1) return disagreement(lock_path, at + ": listed twice", offer);
    const auto it = offered.find(archive.name);
    if (it == offered.end())
      return disagreement(lock_path, at + ": " + offer.release + " has no such archive", offer);
    if (const auto why = first_difference(archive, *it->second); !why.empty())
      return disagreement(lock_path, at + "." + why, offer);
    if (archive.size == 0)
      return disagreement(lock_path, at + ".size: an archive is never empty", offer);
  }
  for (const auto& [name, archive] : offered) {
    if (seen.count(name) == 0)
      return disagreement(lock_path,
                          field + ".components: the lock leaves out " + text::printable(name) +
                              ", an archive of " + offer.release,
                          offer);
  }
  return Ok{};
}

}  // namespace cudaenv::lock
