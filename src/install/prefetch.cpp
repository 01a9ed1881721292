#include "install/prefetch.hpp"

#include "core/parallel.hpp"
#include "fetch/http.hpp"
#include "install/interrupt.hpp"
#include "install/lock.hpp"
#include "install/remote.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

namespace {

struct Fetch {
  const InstallPlan* plan;
  const SelectedArchive* archive;
};

std::vector<Fetch> pending(const std::vector<InstallPlan>& plans) {
  std::vector<Fetch> out;
  std::error_code ec;
  for (const auto& plan : plans) {
    if (fs::exists(plan.target / receipt_file_name, ec)) continue;
    for (const auto& archive : plan.archives) out.push_back({&plan, &archive});
  }
  return out;
}

Status fetch_one(const Fetch& item, size_t index, const Store& store,
                 const InstallSettings& settings, InstallObserver& observer,
                 const FirstError& first) {
  const auto& file = item.archive->file;
  const auto url = item.archive->url.empty()
                       ? archive_url(item.plan->mirror, item.plan->product, file.relative_path)
                       : item.archive->url;
  const auto cached = store.downloads() / fs::path(file.relative_path).filename();
  // The same lock the installer holds on a cache file: one process appends to it at a time.
  auto cache_lock = InstallLock::acquire(download_lock_file(cached), {});
  if (!cache_lock) return cache_lock.error();
  auto options = settings.fetch;
  options.lock_cache_file = false;
  options.should_stop = [&] { return first.failed() || InterruptGuard::caught() != 0; };
  fetch::ResumableStream stream(url, cached, file.size, options,
                                [&](std::uint64_t done, std::uint64_t total) {
                                  observer.archive_progress(index, done, total);
                                });
  std::error_code ec;
  if (auto drained = stream.drain(); !drained) {
    if (drained.error().kind == ErrorKind::integrity) fs::remove(cached, ec);
    if (const int signal = InterruptGuard::caught()) return interrupted_error(signal, url);
    return drained.error();
  }
  if (stream.sha256_hex() != file.sha256) {
    fs::remove(cached, ec);  // never resumed, never replayed
    return make_error(ErrorKind::integrity, "sha256 mismatch for " + url + ": expected " +
                                                file.sha256 + ", got " + stream.sha256_hex());
  }
  observer.archive_done(index);
  return Ok{};
}

}  // namespace

std::vector<SelectedArchive> archives_to_fetch(const std::vector<InstallPlan>& plans) {
  std::vector<SelectedArchive> out;
  for (const auto& item : pending(plans)) out.push_back(*item.archive);
  return out;
}

Status fetch_and_check(const std::vector<InstallPlan>& plans, const Store& store,
                       const InstallSettings& settings, InstallObserver& observer) {
  const InterruptGuard interrupt;
  const auto items = pending(plans);
  return for_each_in_parallel(items.size(), settings.jobs, "downloading the archives",
                              [&](size_t index, const FirstError& first) {
                                return fetch_one(items[index], index, store, settings, observer,
                                                 first);
                              });
}

}  // namespace cudaenv::install
