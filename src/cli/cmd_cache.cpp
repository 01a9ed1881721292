// `cudaenv cache [--json]`, `cudaenv cache clean [--json]`, `cudaenv cache prune [--json]`: what
// the store keeps besides the installs, and removing it. install/cache.cpp decides; this prints.

#include <array>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/cache.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;
using install::CacheEntry;
using install::CacheKind;
using install::CacheNeed;

struct CacheOptions {
  bool json = false;
};

constexpr std::array<CacheKind, 6> kinds = {CacheKind::download, CacheKind::unpacked,
                                            CacheKind::manifest, CacheKind::verify_build,
                                            CacheKind::staging,  CacheKind::lock};

// The JSON key and the plural a person reads.
std::string json_key(CacheKind kind) {
  switch (kind) {
    case CacheKind::download: return "downloads";
    case CacheKind::manifest: return "manifests";
    case CacheKind::verify_build: return "verify_builds";
    case CacheKind::staging: return "staging";
    case CacheKind::lock: return "locks";
    case CacheKind::unpacked: return "unpacked";
  }
  return "other";
}

std::string counted(CacheKind kind, std::size_t n) {
  static const std::map<CacheKind, std::pair<const char*, const char*>> nouns = {
      {CacheKind::download, {"download", "downloads"}},
      {CacheKind::manifest, {"manifest", "manifests"}},
      {CacheKind::verify_build, {"verify build", "verify builds"}},
      {CacheKind::staging, {"staging directory", "staging directories"}},
      {CacheKind::lock, {"lock file", "lock files"}},
      {CacheKind::unpacked, {"unpacked archive", "unpacked archives"}}};
  const auto& [one, many] = nouns.at(kind);
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

struct Tally {
  std::size_t count = 0, prunable = 0, in_use = 0;
  std::uint64_t bytes = 0, prunable_bytes = 0;
};

std::map<CacheKind, Tally> tally(const std::vector<CacheEntry>& entries) {
  std::map<CacheKind, Tally> tallies;
  for (const auto& entry : entries) {
    auto& t = tallies[entry.kind];
    ++t.count;
    t.bytes += entry.bytes;
    if (entry.need == CacheNeed::unneeded) {
      ++t.prunable;
      t.prunable_bytes += entry.bytes;
    }
    if (entry.need == CacheNeed::in_use) ++t.in_use;
  }
  return tallies;
}

// What `clean` would free: every download not in use, the manifests, verify's builds and the
// unpacked archives no prefix links.
std::uint64_t clean_frees(const std::vector<CacheEntry>& entries) {
  std::uint64_t bytes = 0;
  for (const auto& e : entries) {
    const bool cache = e.kind == CacheKind::manifest || e.kind == CacheKind::verify_build ||
                       (e.kind == CacheKind::download && e.need != CacheNeed::in_use) ||
                       (e.kind == CacheKind::unpacked && e.need == CacheNeed::unneeded);
    if (cache) bytes += e.bytes;
  }
  return bytes;
}

std::string need_name(CacheNeed need) {
  switch (need) {
    case CacheNeed::needed: return "kept";
    case CacheNeed::unneeded: return "prunable";
    case CacheNeed::in_use: return "in_use";
  }
  return "kept";
}

json entries_json(const std::vector<CacheEntry>& entries) {
  json list = json::array();
  for (const auto& e : entries) {
    list.push_back({{"kind", json_key(e.kind)},
                    {"path", e.path.string()},
                    {"bytes", e.bytes},
                    {"state", need_name(e.need)}});
  }
  return list;
}

void print_survey_json(const install::Store& store, const install::CacheSurvey& survey,
                       Context& context) {
  const auto tallies = tally(survey.entries);
  json doc{{"root", store.root.string()}};
  std::uint64_t total = 0, prunable = 0;
  for (const auto kind : kinds) {
    const auto t = tallies.contains(kind) ? tallies.at(kind) : Tally{};
    doc[json_key(kind)] = {{"count", t.count},
                           {"bytes", t.bytes},
                           {"prunable", t.prunable},
                           {"prunable_bytes", t.prunable_bytes},
                           {"in_use", t.in_use}};
    total += t.bytes;
    prunable += t.prunable_bytes;
  }
  doc["total_bytes"] = total;
  doc["clean_frees_bytes"] = clean_frees(survey.entries);
  doc["prune_frees_bytes"] = prunable;
  doc["shared_bytes_saved"] = survey.shared_bytes_saved;
  doc["downloads_kept_because"] =
      survey.downloads_kept_because ? json(*survey.downloads_kept_because) : json(nullptr);
  doc["entries"] = entries_json(survey.entries);
  context.out << doc.dump(2) << '\n';
}

std::string row_note(CacheKind kind, const Tally& t) {
  std::vector<std::string> notes;
  if (t.prunable > 0) {
    notes.push_back("prune removes " + std::to_string(t.prunable) +
                    (kind == CacheKind::lock ? "" : " (" + human_bytes(t.prunable_bytes) + ")"));
  }
  if (t.in_use > 0) notes.push_back(std::to_string(t.in_use) + " in use by a running install");
  return text::join(notes, "; ");
}

void print_survey_text(const install::Store& store, const install::CacheSurvey& survey,
                       Context& context) {
  const auto tallies = tally(survey.entries);
  context.out << styled("cudaenv cache in " + text::printable(store.root.string()), Tone::heading,
                        context.colour)
              << '\n';
  std::uint64_t total = 0, prunable = 0;
  for (const auto kind : kinds) {
    const auto t = tallies.contains(kind) ? tallies.at(kind) : Tally{};
    total += t.bytes;
    prunable += t.prunable_bytes;
    std::array<char, 128> line{};
    std::snprintf(line.data(), line.size(), "  %-36s %10s  ", counted(kind, t.count).c_str(),
                  kind == CacheKind::lock ? "" : human_bytes(t.bytes).c_str());
    auto row = line.data() + row_note(kind, t);
    row.erase(row.find_last_not_of(' ') + 1);
    context.out << row << '\n';
  }
  context.out << "total " << human_bytes(total) << "; 'cudaenv cache clean' frees "
              << human_bytes(clean_frees(survey.entries))
              << " (downloads, manifests, verify builds, unlinked unpacked archives), "
                 "'cudaenv cache prune' frees "
              << human_bytes(prunable) << " (what no installed version needs)\n";
  if (survey.shared_bytes_saved > 0) {
    context.out << "shared unpacked files save " << human_bytes(survey.shared_bytes_saved)
                << ": prefixes that install the same archive link one copy\n";
  }
  if (survey.downloads_kept_because) {
    context.out << "prune keeps every download: " << text::printable(*survey.downloads_kept_because)
                << '\n';
  }
}

Status print_cleanup(const install::CacheCleanup& cleanup, const CacheOptions& options,
                     Context& context) {
  if (options.json) {
    context.out << json{{"removed", entries_json(cleanup.removed)},
                        {"in_use", entries_json(cleanup.in_use)},
                        {"bytes_freed", cleanup.bytes_freed}}
                       .dump(2)
                << '\n';
  } else {
    std::map<CacheKind, std::size_t> removed, in_use;
    for (const auto& e : cleanup.removed) ++removed[e.kind];
    for (const auto& e : cleanup.in_use) ++in_use[e.kind];
    std::vector<std::string> parts, kept;
    for (const auto& [kind, n] : removed) parts.push_back(counted(kind, n));
    for (const auto& [kind, n] : in_use) kept.push_back(counted(kind, n));
    if (parts.empty()) context.out << "nothing to remove\n";
    if (!parts.empty()) {
      context.out << "removed " << text::join(parts, ", ") << " ("
                  << human_bytes(cleanup.bytes_freed) << " freed)\n";
    }
    if (!kept.empty())
      context.out << "kept " << text::join(kept, ", ") << ": in use by a running install\n";
  }
  if (!cleanup.failures.empty()) return cleanup.failures.front();
  return Ok{};
}

enum class CacheAction { show, clean, prune };

Status run_cache(CacheAction action, const CacheOptions& options, Context& context) {
  const install::Store store{paths::data_root(context.env)};
  if (action == CacheAction::clean)
    return print_cleanup(install::clean_cache(store), options, context);
  if (action == CacheAction::prune)
    return print_cleanup(install::prune_cache(store), options, context);
  const auto survey = install::survey_cache(store);
  if (options.json)
    print_survey_json(store, survey, context);
  else
    print_survey_text(store, survey, context);
  return Ok{};
}

}  // namespace

void add_cache_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<CacheOptions>();
  auto* cache = app.add_subcommand(
      "cache", "Sizes of downloads, verify builds, stale staging and lock files in the store");
  cache->add_flag("--json", options->json, "Print the sizes as JSON");
  cache->require_subcommand(0, 1);
  auto* clean = cache->add_subcommand("clean", "Remove the downloads, manifests and verify builds");
  auto* prune = cache->add_subcommand(
      "prune", "Remove only what nothing needs: stale staging, unneeded downloads, stale locks");
  for (auto* sub : {clean, prune}) sub->add_flag("--json", options->json, "Print as JSON");
  clean->callback([options, &context, &outcome] {
    outcome.status = run_cache(CacheAction::clean, *options, context);
  });
  prune->callback([options, &context, &outcome] {
    outcome.status = run_cache(CacheAction::prune, *options, context);
  });
  cache->callback([options, clean, prune, &context, &outcome] {
    if (clean->parsed() || prune->parsed()) return;
    outcome.status = run_cache(CacheAction::show, *options, context);
  });
}

}  // namespace cudaenv::cli
