#include "install/mirror_create.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/parallel.hpp"
#include "core/safe_write.hpp"
#include "install/db_update.hpp"
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
  // Checked up to the close: on a full disk a small file fails only when it is flushed.
  return write_file_atomically(path, document.dump(4) + "\n");
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

Result<MirrorRelease> plan_mirror_release(const MirrorRequest& request, const ReleaseSource& source,
                                          const std::string& platform) {
  auto spec = parse_spec_flag(request.spec, "--" + request.product);
  if (!spec) return spec.error();
  auto version = choose_release(source, request.product, *spec);
  if (!version) return version.error();
  std::string raw;
  auto manifest =
      fetch_manifest(source.mirror, request.product, *version, source.store, source.fetch, &raw);
  if (!manifest) return manifest.error();
  auto archives = request.product == "cuda"
                      ? select_cuda_components(*manifest, request.components, platform)
                      : select_cudnn_all_variants(*manifest, platform);
  if (!archives) return archives.error();
  return MirrorRelease{request.product, *version, std::move(*archives), std::move(raw)};
}

Status create_mirror_release(const fs::path& dir, const std::string& upstream,
                             const MirrorRelease& release, const InstallSettings& settings,
                             InstallObserver& observer) {
  const auto redist = dir / release.product / "redist";
  auto copied = for_each_in_parallel(
      release.archives.size(), settings.jobs, [&](size_t index, const FirstError&) {
        return mirror_archive(redist, upstream, release, index, settings, observer);
      });
  if (!copied) return copied.error();
  // The manifest goes last: a mirror never lists a release whose archives are not all there.
  return write_filtered_manifest(redist / ("redistrib_" + release.version.str() + ".json"),
                                 release);
}

Result<manifest::DbIndex> publish_database_in_use(const fs::path& dir, const fs::path& data_root) {
  auto selected = manifest::load_selected_database(data_root);
  if (!selected) return selected.error();
  auto date = selected->origin.date;
  if (date.empty()) date = manifest::utc_timestamp(std::chrono::system_clock::now()).substr(0, 10);
  return publish_database(dir, selected->files, selected->origin.revision, date);
}

}  // namespace cudaenv::install
