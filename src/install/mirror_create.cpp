#include "install/mirror_create.hpp"

#include <atomic>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "install/remote.hpp"

namespace cudaenv::install {

namespace {

Status write_filtered_manifest(const fs::path& path, const MirrorRelease& release) {
  auto document = nlohmann::ordered_json::parse(release.manifest_json, nullptr, false);
  if (!document.is_object())
    return make_error(ErrorKind::failure, "the upstream manifest is not JSON");
  std::set<std::string> kept;
  for (const auto& archive : release.archives) kept.insert(archive.component);
  for (auto it = document.begin(); it != document.end();) {
    it = it->is_object() && kept.count(it.key()) == 0 ? document.erase(it) : std::next(it);
  }
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path);
  out << document.dump(4) << '\n';
  if (!out) return make_error(ErrorKind::failure, "cannot write " + path.string());
  return Ok{};
}

Status mirror_archive(const fs::path& redist, const std::string& upstream,
                      const MirrorRelease& release, size_t index, const InstallSettings& settings,
                      InstallObserver& observer) {
  const auto& archive = release.archives[index];
  const auto destination = redist / archive.file.relative_path;
  const auto url = archive_url(upstream, release.product, archive.file.relative_path);
  fetch::ResumableStream stream(url, destination, archive.file.size, settings.fetch,
                                [&](std::uint64_t done, std::uint64_t total) {
                                  observer.archive_progress(index, done, total);
                                });
  if (auto drained = stream.drain(); !drained) return drained.error();
  if (stream.sha256_hex() != archive.file.sha256) {
    std::error_code ec;
    fs::remove(destination, ec);
    return make_error(ErrorKind::integrity,
                      "sha256 mismatch for " + url + ": expected " + archive.file.sha256 +
                          ", got " + stream.sha256_hex(),
                      "the file was removed; run the command again, or use another upstream");
  }
  observer.archive_done(index);
  return Ok{};
}

}  // namespace

Status create_mirror_release(const fs::path& dir, const std::string& upstream,
                             const MirrorRelease& release, const InstallSettings& settings,
                             InstallObserver& observer) {
  const auto redist = dir / release.product / "redist";
  std::mutex mutex;
  std::optional<Error> first_error;
  std::atomic<size_t> next_index{0};
  const auto worker = [&] {
    for (size_t i = next_index++; i < release.archives.size(); i = next_index++) {
      {
        std::lock_guard lock(mutex);
        if (first_error) return;
      }
      if (auto status = mirror_archive(redist, upstream, release, i, settings, observer); !status) {
        std::lock_guard lock(mutex);
        if (!first_error) first_error = status.error();
      }
    }
  };
  std::vector<std::thread> pool;
  const auto threads =
      std::min<size_t>(static_cast<size_t>(std::max(settings.jobs, 1)), release.archives.size());
  for (size_t i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& thread : pool) thread.join();
  if (first_error) return *first_error;
  // The manifest goes last: a mirror never lists a release whose archives are not all there.
  return write_filtered_manifest(redist / ("redistrib_" + release.version.str() + ".json"),
                                 release);
}

}  // namespace cudaenv::install
