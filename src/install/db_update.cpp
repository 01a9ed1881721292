#include "install/db_update.hpp"

#include <algorithm>

#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "install/interrupt.hpp"
#include "install/store.hpp"
#include "manifest/db_install.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

namespace {

Result<manifest::DbIndex> fetch_index(const DbUpdateRequest& request) {
  const auto url = db_index_url(request.mirror);
  auto options = request.fetch;
  options.max_document_bytes = std::min(options.max_document_bytes, manifest::db_max_index_bytes);
  long status = 0;
  auto text = fetch::fetch_text(url, options, &status);
  if (!text && status == 404) {
    return make_error(ErrorKind::not_found, url + ": the mirror publishes no database",
                      "publish one with cudaenv mirror create, or name another --mirror");
  }
  if (!text && text.error().kind == ErrorKind::network) {
    return make_error(ErrorKind::network, "cannot reach the mirror: " + text.error().message,
                      "the database in use (revision " + request.revision_in_use +
                          ") stays; every other command keeps working with it");
  }
  if (!text) return text.error();
  return manifest::parse_db_index(*text, url);
}

Status download_file(const DbUpdateRequest& request, const manifest::DbIndex& index,
                     const manifest::DbFile& file, const fs::path& staging) {
  const auto url = db_file_url(request.mirror, index.revision, file.name);
  fetch::ResumableStream stream(url, staging / file.name, file.size, request.fetch);
  if (auto drained = stream.drain(); !drained) return drained.error();
  if (stream.bytes() != file.size || stream.sha256_hex() != file.sha256) {
    return make_error(ErrorKind::integrity,
                      "sha256 mismatch for " + url + ": expected " + file.sha256 + " (" +
                          std::to_string(file.size) + " bytes), got " + stream.sha256_hex() + " (" +
                          std::to_string(stream.bytes()) + " bytes)",
                      "the database in use is unchanged; the mirror's copy is damaged: publish "
                      "it again, or use another --mirror");
  }
  return Ok{};
}

Status download_all(const DbUpdateRequest& request, const manifest::DbIndex& index,
                    const fs::path& staging) {
  for (const auto& file : index.files) {
    if (auto downloaded = download_file(request, index, file, staging); !downloaded)
      return downloaded;
    if (const int signal = InterruptGuard::caught())
      return interrupted_error(signal, "the database update");
  }
  return manifest::check_staged_database(staging, index);
}

Result<DbUpdateResult> install_index(const DbUpdateRequest& request,
                                     const manifest::DbIndex& index) {
  auto lock = InstallLock::acquire(request.data_root / ".lock-manifests", [] {});
  if (!lock) return lock.error();
  auto staging = manifest::make_db_staging(request.data_root);
  if (!staging) return staging.error();
  auto status = download_all(request, index, *staging);
  Result<manifest::DbCommit> committed = manifest::DbCommit{};
  if (status) {
    const manifest::DbRecord record{index, db_index_url(request.mirror),
                                    manifest::utc_timestamp(std::chrono::system_clock::now())};
    committed = manifest::commit_database(*staging, request.data_root, record);
  }
  std::error_code ec;
  fs::remove_all(*staging, ec);  // nothing is left of a failed update
  if (!status) return status.error();
  if (!committed) return committed.error();
  return DbUpdateResult{true, index, db_index_url(request.mirror), committed->kept_local_copies};
}

}  // namespace

std::string db_index_url(const std::string& mirror) { return mirror + "/cudaenv/db/index.json"; }

std::string db_file_url(const std::string& mirror, const std::string& revision,
                        const std::string& name) {
  return mirror + "/cudaenv/db/" + revision + "/" + name;
}

Result<DbUpdateResult> update_database(const DbUpdateRequest& request) {
  const InterruptGuard interrupt;
  auto stoppable = request;  // Ctrl-C stops a transfer at once, not at its stall timeout
  stoppable.fetch.should_stop = [] { return InterruptGuard::caught() != 0; };
  auto index = fetch_index(stoppable);
  auto result = index ? Result<DbUpdateResult>(DbUpdateResult{}) : index.error();
  if (index && manifest::compare_revisions(index->revision, request.revision_in_use) <= 0)
    result = DbUpdateResult{false, *index, db_index_url(request.mirror), {}};
  else if (index)
    result = install_index(stoppable, *index);
  if (const int signal = InterruptGuard::caught(); signal != 0 && !result)
    return interrupted_error(signal, "the database update");
  return result;
}

Result<manifest::DbIndex> publish_database(const fs::path& dir,
                                           const std::vector<manifest::ManifestFile>& files,
                                           const std::string& revision, const std::string& date) {
  const auto db_dir = dir / "cudaenv" / "db";
  manifest::DbIndex index{revision, date, {}};
  for (const auto& file : files) {
    const auto path = db_dir / revision / file.name;
    if (auto written = write_file_atomically(path, file.text); !written) return written.error();
    auto sha = fetch::sha256_file(path);
    if (!sha) return sha.error();
    index.files.push_back({file.name, *sha, file.text.size()});
  }
  if (auto written = write_file_atomically(db_dir / "index.json", manifest::db_index_json(index));
      !written)
    return written.error();
  return index;
}

}  // namespace cudaenv::install
