#include "install/installer.hpp"

#include <unistd.h>

#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/parallel.hpp"
#include "install/extract.hpp"
#include "install/remote.hpp"

namespace cudaenv::install {

namespace {

fs::path cache_file(const Store& store, const SelectedArchive& archive) {
  return store.downloads() / fs::path(archive.file.relative_path).filename();
}

Status install_archive(const InstallPlan& plan, size_t index, const Store& store,
                       const fs::path& staging, const InstallSettings& settings,
                       InstallObserver& observer, const FirstError& first) {
  const auto& archive = plan.archives[index];
  const auto url = archive_url(plan.mirror, plan.product, archive.file.relative_path);
  const auto cached = cache_file(store, archive);
  auto fetch_options = settings.fetch;
  fetch_options.lock_cache_file = true;  // the download cache is shared between installs
  fetch::ResumableStream stream(url, cached, archive.file.size, fetch_options,
                                [&](std::uint64_t done, std::uint64_t total) {
                                  observer.archive_progress(index, done, total);
                                });
  const ChunkSource source = [&]() -> Result<std::string_view> {
    if (first.failed()) return make_error(ErrorKind::failure, "stopped: another archive failed");
    return stream.next();
  };
  const auto drain = [&]() -> Status {
    while (true) {
      auto chunk = source();
      if (!chunk) return chunk.error();
      if (chunk->empty()) return Ok{};
    }
  };
  auto extracted = extract(
      source,
      {staging, fs::path(archive.file.relative_path).filename().string(), archive.component});
  std::error_code ec;
  if (!extracted) {
    if (extracted.error().kind != ErrorKind::integrity) return extracted.error();
    // The archive did not read, or holds an unsafe entry. Read the rest to tell a corrupt
    // download (a checksum mismatch) from a hostile archive; bytes that cannot be verified are
    // dropped, or every later run would replay them from the cache and fail the same way.
    if (!drain()) {
      fs::remove(cached, ec);
      return extracted.error();
    }
  } else if (auto rest = drain(); !rest) {
    return rest.error();  // trailing bytes after the archive's end
  }
  if (stream.sha256_hex() != archive.file.sha256) {
    fs::remove(cached, ec);  // a corrupt download is never resumed
    return make_error(ErrorKind::integrity,
                      "sha256 mismatch for " + url + ": expected " + archive.file.sha256 +
                          ", got " + stream.sha256_hex(),
                      "the download was discarded; run the command again, or use another mirror");
  }
  if (!extracted) return extracted.error();
  observer.archive_done(index);
  return Ok{};
}

Status install_all(const InstallPlan& plan, const Store& store, const fs::path& staging,
                   const InstallSettings& settings, InstallObserver& observer) {
  return for_each_in_parallel(
      plan.archives.size(), settings.jobs, [&](size_t index, const FirstError& first) {
        return install_archive(plan, index, store, staging, settings, observer, first);
      });
}

Receipt receipt_of(const InstallPlan& plan) {
  Receipt receipt{
      plan.product, plan.version, plan.platform, plan.variant, plan.mirror, utc_timestamp(), {}};
  for (const auto& archive : plan.archives) {
    receipt.components.push_back(
        {archive.component, archive.version, archive.file.sha256,
         archive_url(plan.mirror, plan.product, archive.file.relative_path), archive.file.size});
  }
  return receipt;
}

// NVIDIA's toolkits carry a version.json that tools (CMake's FindCUDAToolkit among them) read;
// the redist archives do not, so the install writes one in the same shape.
void write_version_json(const fs::path& prefix, const InstallPlan& plan) {
  if (plan.product != "cuda" || fs::exists(prefix / "version.json")) return;
  nlohmann::ordered_json doc;
  doc["cuda"] = {{"name", "CUDA SDK"}, {"version", plan.version}};
  for (const auto& archive : plan.archives) doc[archive.component] = {{"version", archive.version}};
  std::ofstream(prefix / "version.json") << doc.dump(3) << '\n';
}

Status commit(const fs::path& staging, const fs::path& target, bool replace) {
  std::error_code ec;
  if (replace && fs::exists(target, ec)) {
    const auto old = target.parent_path() /
                     (".old-" + target.filename().string() + "-" + std::to_string(::getpid()));
    fs::rename(target, old, ec);
    if (ec)
      return make_error(ErrorKind::failure,
                        "cannot replace " + target.string() + ": " + ec.message());
    fs::rename(staging, target, ec);
    fs::remove_all(old);
  } else {
    fs::rename(staging, target, ec);
  }
  if (ec)
    return make_error(ErrorKind::failure,
                      "cannot move the install into " + target.string() + ": " + ec.message());
  return Ok{};
}

}  // namespace

void link_lib64(const fs::path& prefix) {
  std::error_code ec;
  const bool has_lib = fs::is_directory(prefix / "lib", ec);
  const bool has_lib64 = fs::exists(fs::symlink_status(prefix / "lib64", ec));
  if (has_lib && !has_lib64) fs::create_directory_symlink("lib", prefix / "lib64", ec);
  if (!has_lib && has_lib64) fs::create_directory_symlink("lib64", prefix / "lib", ec);
}

Result<InstallOutcome> run_install(const InstallPlan& plan, const Store& store,
                                   const InstallSettings& settings, InstallObserver& observer) {
  const auto parent = plan.target.parent_path();
  const auto name = plan.target.filename().string();
  auto lock =
      InstallLock::acquire(parent / (".lock-" + name), [&] { observer.waiting_for_lock(); });
  if (!lock) return lock.error();
  std::error_code ec;
  if (fs::exists(plan.target / receipt_file_name, ec) && !settings.force)
    return InstallOutcome::already_installed;
  remove_stale_staging(parent, name);
  const auto staging = parent / (".staging-" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(staging, ec);
  if (ec)
    return make_error(ErrorKind::failure,
                      "cannot create " + staging.string() + ": " + ec.message());
  auto status = install_all(plan, store, staging, settings, observer);
  if (status) {
    link_lib64(staging);
    write_version_json(staging, plan);
    status = write_receipt(staging, receipt_of(plan));
  }
  if (status) status = commit(staging, plan.target, settings.force);
  if (!status) {
    fs::remove_all(staging, ec);
    return status.error();
  }
  return InstallOutcome::installed;
}

}  // namespace cudaenv::install
