#include "install/cache.hpp"

#include <set>
#include <system_error>

#include <sys/stat.h>

#include "core/text.hpp"
#include "install/writable.hpp"

namespace cudaenv::install {

namespace {

constexpr std::string_view lock_prefix = ".lock-";
constexpr std::string_view lock_suffix = ".lock";
constexpr std::string_view staging_prefixes[] = {".staging-", ".old-", ".replaced-"};

// Apparent bytes of a file, or of every regular file below a directory (links not followed).
std::uint64_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (fs::is_regular_file(status)) return fs::file_size(path, ec);
  if (!fs::is_directory(status)) return 0;
  std::uint64_t total = 0;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  }
  return total;
}

std::vector<fs::path> children(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    found.push_back(it->path());
  return found;
}

// The install target a staging entry belongs to: ".staging-12.4.1-4242" -> "12.4.1".
std::optional<std::string> staged_name(const std::string& entry) {
  for (const auto prefix : staging_prefixes) {
    if (!text::starts_with(entry, prefix)) continue;
    const auto rest = entry.substr(prefix.size());
    const auto dash = rest.rfind('-');
    if (dash == std::string::npos || dash == 0) return std::nullopt;
    return rest.substr(0, dash);
  }
  return std::nullopt;
}

// What the installed versions need: their archives (by file name) and manifests.
struct Needs {
  std::set<std::string> archives;
  std::set<std::string> unpacked;   // "<sha256>.<component>", as installer.cpp names them
  std::set<std::string> manifests;  // "cuda/redistrib_12.4.1.json"
  std::optional<std::string> unknown_because;
};

Needs needs_of(const Store& store) {
  Needs needs;
  for (const auto* product : {"cuda", "cudnn"}) {
    const bool cuda = std::string_view(product) == "cuda";
    for (const auto& item : cuda ? installed_toolkits(store) : installed_cudnn(store)) {
      needs.manifests.insert(std::string(product) + "/redistrib_" + item.version.str() + ".json");
      if (!item.receipt) {
        needs.unknown_because = "the receipt of " + item.path.string() + " cannot be read";
        continue;
      }
      for (const auto& component : item.receipt->components) {
        needs.archives.insert(fs::path(component.url).filename().string());
        needs.unpacked.insert(component.sha256 + "." + component.name);
      }
    }
  }
  return needs;
}

// A "<entry>.lock" beside what it guards (a download, an unpacked tree): in use while held,
// needed while its entry exists.
CacheEntry guarding_lock(const fs::path& path) {
  const auto name = path.filename().string();
  const auto guarded = path.parent_path() / name.substr(0, name.size() - lock_suffix.size());
  std::error_code ec;
  const auto need = InstallLock::is_held(path)                    ? CacheNeed::in_use
                    : fs::exists(fs::symlink_status(guarded, ec)) ? CacheNeed::needed
                                                                  : CacheNeed::unneeded;
  return {CacheKind::lock, path, 0, need};
}

void survey_downloads(const Store& store, const Needs& needs, CacheSurvey& survey) {
  for (const auto& path : children(store.downloads())) {
    const auto name = path.filename().string();
    if (text::starts_with(name, ".")) continue;  // a lock's owner file (install/lock_owner.hpp)
    if (name.ends_with(lock_suffix)) {
      survey.entries.push_back(guarding_lock(path));
      continue;
    }
    auto need = needs.unknown_because || needs.archives.contains(name) ? CacheNeed::needed
                                                                       : CacheNeed::unneeded;
    if (InstallLock::is_held(download_lock_file(path))) need = CacheNeed::in_use;
    survey.entries.push_back({CacheKind::download, path, size_of(path), need});
  }
}

void survey_manifests(const Store& store, const Needs& needs, CacheSurvey& survey) {
  for (const auto& product_dir : children(store.manifests())) {
    for (const auto& path : children(product_dir)) {
      const auto key = product_dir.filename().string() + "/" + path.filename().string();
      const auto need = needs.manifests.contains(key) ? CacheNeed::needed : CacheNeed::unneeded;
      survey.entries.push_back({CacheKind::manifest, path, size_of(path), need});
    }
  }
}

// Staging leftovers and install locks in toolkits/ or cudnn/.
void survey_installs_dir(const fs::path& dir, CacheSurvey& survey) {
  std::set<std::string> staged;
  const auto entries = children(dir);
  for (const auto& path : entries) {
    const auto name = staged_name(path.filename().string());
    if (!name) continue;
    staged.insert(*name);
    const bool busy = InstallLock::is_held(dir / (std::string(lock_prefix) + *name));
    survey.entries.push_back(
        {CacheKind::staging, path, size_of(path), busy ? CacheNeed::in_use : CacheNeed::unneeded});
  }
  for (const auto& path : entries) {
    const auto entry = path.filename().string();
    if (!text::starts_with(entry, lock_prefix)) continue;
    const auto name = entry.substr(lock_prefix.size());
    std::error_code ec;
    auto need = fs::exists(dir / name, ec) || staged.contains(name) ? CacheNeed::needed
                                                                    : CacheNeed::unneeded;
    if (InstallLock::is_held(path)) need = CacheNeed::in_use;
    survey.entries.push_back({CacheKind::lock, path, 0, need});
  }
}

// What removing an unpacked tree frees (its files no prefix links) and what sharing it saves.
struct UnpackedBytes {
  std::uint64_t freed = 0, saved = 0;
};

UnpackedBytes unpacked_bytes(const fs::path& tree) {
  UnpackedBytes bytes;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(tree, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (st.st_nlink == 1) bytes.freed += size;
    if (st.st_nlink > 2) bytes.saved += size * (st.st_nlink - 2);
  }
  return bytes;
}

// The shared unpacked store: trees, their locks, and partial trees a killed install left.
void survey_unpacked(const Store& store, const Needs& needs, CacheSurvey& survey) {
  for (const auto& path : children(store.unpacked())) {
    const auto name = path.filename().string();
    if (text::starts_with(name, ".partial-")) {
      const auto rest = name.substr(9);
      const auto key = rest.substr(0, rest.rfind('-'));
      const bool busy = InstallLock::is_held(store.unpacked() / (key + std::string(lock_suffix)));
      survey.entries.push_back({CacheKind::staging, path, size_of(path),
                                busy ? CacheNeed::in_use : CacheNeed::unneeded});
      continue;
    }
    if (text::starts_with(name, ".")) continue;  // a lock's owner file
    if (name.ends_with(lock_suffix)) {
      survey.entries.push_back(guarding_lock(path));
      continue;
    }
    const auto bytes = unpacked_bytes(path);
    survey.shared_bytes_saved += bytes.saved;
    auto need = needs.unknown_because || needs.unpacked.contains(name) ? CacheNeed::needed
                                                                       : CacheNeed::unneeded;
    if (InstallLock::is_held(path.string() + std::string(lock_suffix))) need = CacheNeed::in_use;
    survey.entries.push_back({CacheKind::unpacked, path, bytes.freed, need});
  }
}

void survey_verify_builds(const Store& store, CacheSurvey& survey) {
  for (const auto& path : children(store.verify_builds()))
    survey.entries.push_back({CacheKind::verify_build, path, size_of(path), CacheNeed::needed});
}

// Removes `entry` (a file or directory with no lock of its own), recording the outcome.
void remove_entry(const CacheEntry& entry, CacheCleanup& cleanup) {
  std::error_code ec;
  fs::remove_all(entry.path, ec);
  if (ec) {
    cleanup.failures.push_back(unremovable_error(entry.path, ec.value()));
    return;
  }
  cleanup.removed.push_back(entry);
  cleanup.bytes_freed += entry.bytes;
}

// `lock_file` taken for removing `entry`; nullopt when it cannot be taken (recorded as a failure)
// or someone holds it (the entry recorded as in use).
std::optional<InstallLock> lock_for_removal(const CacheEntry& entry, const fs::path& lock_file,
                                            CacheCleanup& cleanup) {
  auto lock = InstallLock::try_acquire(lock_file);
  if (!lock) {
    cleanup.failures.push_back(lock.error());
    return std::nullopt;
  }
  if (!*lock) cleanup.in_use.push_back(entry);
  return std::move(*lock);
}

// Removes `entry` while holding `lock_file`; left alone when someone holds it. With
// `drop_lock`, the lock file goes too (still held while it is unlinked).
void remove_under_lock(const CacheEntry& entry, const fs::path& lock_file, bool drop_lock,
                       CacheCleanup& cleanup) {
  auto lock = lock_for_removal(entry, lock_file, cleanup);
  if (!lock) return;
  const auto failures = cleanup.failures.size();
  remove_entry(entry, cleanup);
  if (drop_lock && cleanup.failures.size() == failures) std::move(*lock).remove_file();
}

void remove_download(const CacheEntry& entry, CacheCleanup& cleanup) {
  if (entry.need == CacheNeed::in_use) {
    cleanup.in_use.push_back(entry);
    return;
  }
  remove_under_lock(entry, download_lock_file(entry.path), true, cleanup);
}

// An unpacked tree, or a partial one, goes under the tree's lock: an install unpacking or
// linking it holds that.
void remove_unpacked(const CacheEntry& entry, CacheCleanup& cleanup) {
  const auto name = entry.path.filename().string();
  const bool partial = text::starts_with(name, ".partial-");
  const auto key = partial ? name.substr(9, name.rfind('-') - 9) : name;
  remove_under_lock(entry, entry.path.parent_path() / (key + std::string(lock_suffix)), !partial,
                    cleanup);
}

// A staging leftover goes only under its target's install lock: a live install holds it.
void remove_staging(const CacheEntry& entry, CacheCleanup& cleanup) {
  if (entry.path.parent_path().filename() == "unpacked") return remove_unpacked(entry, cleanup);
  const auto dir = entry.path.parent_path();
  const auto name = staged_name(entry.path.filename().string()).value_or("");
  const auto lock = lock_for_removal(entry, dir / (std::string(lock_prefix) + name), cleanup);
  if (!lock) return;
  std::error_code ec;
  const bool put_back = text::starts_with(entry.path.filename().string(), ".replaced-") &&
                        !fs::exists(fs::symlink_status(dir / name, ec));
  remove_stale_staging(dir, name);  // what an install does first: it may put a prefix back
  if (fs::exists(fs::symlink_status(entry.path, ec))) {
    cleanup.failures.push_back(unremovable_error(entry.path, EACCES));
    return;
  }
  cleanup.removed.push_back(entry);
  if (!put_back) cleanup.bytes_freed += entry.bytes;
}

// Whether a lock file still guards nothing: no such install and no staging of it, or (beside a
// download) no such download.
bool guards_nothing(const fs::path& lock_file) {
  std::error_code ec;
  const auto entry = lock_file.filename().string();
  if (!text::starts_with(entry, lock_prefix)) {
    const auto& full = lock_file.string();
    return !fs::exists(fs::symlink_status(full.substr(0, full.size() - lock_suffix.size()), ec));
  }
  const auto name = entry.substr(lock_prefix.size());
  if (fs::exists(fs::symlink_status(lock_file.parent_path() / name, ec))) return false;
  for (const auto& path : children(lock_file.parent_path())) {
    if (staged_name(path.filename().string()) == name) return false;
  }
  return true;
}

// A lock file nothing needs, re-checked while holding it; a held one is simply left.
void remove_lock(const CacheEntry& entry, CacheCleanup& cleanup) {
  auto lock = InstallLock::try_acquire(entry.path);
  if (!lock) {
    cleanup.failures.push_back(lock.error());
    return;
  }
  if (!*lock || !guards_nothing(entry.path)) return;
  std::move(**lock).remove_file();
  cleanup.removed.push_back(entry);
}

}  // namespace

CacheSurvey survey_cache(const Store& store) {
  CacheSurvey survey;
  const auto needs = needs_of(store);
  survey.downloads_kept_because = needs.unknown_because;
  survey_downloads(store, needs, survey);
  survey_manifests(store, needs, survey);
  survey_verify_builds(store, survey);
  survey_installs_dir(store.toolkits(), survey);
  survey_installs_dir(store.cudnn(), survey);
  survey_unpacked(store, needs, survey);
  return survey;
}

CacheCleanup clean_cache(const Store& store) {
  CacheCleanup cleanup;
  for (const auto& entry : survey_cache(store).entries) {
    if (entry.kind == CacheKind::download) remove_download(entry, cleanup);
    if (entry.kind == CacheKind::manifest || entry.kind == CacheKind::verify_build)
      remove_entry(entry, cleanup);
    if (entry.kind == CacheKind::unpacked && entry.need == CacheNeed::unneeded)
      remove_unpacked(entry, cleanup);
  }
  return cleanup;
}

CacheCleanup prune_cache(const Store& store) {
  CacheCleanup cleanup;
  for (const auto& entry : survey_cache(store).entries) {
    if (entry.need == CacheNeed::in_use && entry.kind != CacheKind::lock)
      cleanup.in_use.push_back(entry);
    if (entry.need != CacheNeed::unneeded) continue;
    if (entry.kind == CacheKind::download) remove_download(entry, cleanup);
    if (entry.kind == CacheKind::manifest) remove_entry(entry, cleanup);
    if (entry.kind == CacheKind::staging) remove_staging(entry, cleanup);
    if (entry.kind == CacheKind::unpacked) remove_unpacked(entry, cleanup);
  }
  // Locks last: removing staging leftovers and downloads leaves more of them unneeded.
  for (const auto& entry : survey_cache(store).entries) {
    if (entry.kind == CacheKind::lock && entry.need == CacheNeed::unneeded)
      remove_lock(entry, cleanup);
  }
  return cleanup;
}

std::string cache_kind_name(CacheKind kind) {
  switch (kind) {
    case CacheKind::download: return "download";
    case CacheKind::manifest: return "manifest";
    case CacheKind::verify_build: return "verify build";
    case CacheKind::staging: return "staging";
    case CacheKind::lock: return "lock";
    case CacheKind::unpacked: return "unpacked";
  }
  return "entry";
}

}  // namespace cudaenv::install
