#include "install/wheel_mirror.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/parallel.hpp"
#include "core/safe_write.hpp"
#include "install/extract.hpp"
#include "install/interrupt.hpp"

namespace cudaenv::install {

namespace {

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
using json = nlohmann::ordered_json;

struct Repacked {
  std::string relative_path;  // below <dir>/<product>/redist/
  std::string sha256;
  std::uint64_t size = 0;
};

Error repack_error(const std::string& what, struct archive* a) {
  const char* why = archive_error_string(a);
  return make_error(ErrorKind::failure, what + ": " + (why != nullptr ? why : "unknown error"));
}

// What a repack reports as it reads the wheel: its bytes read so far.
using RepackProgress = std::function<void(std::uint64_t)>;

Status stopped_by_signal() {
  if (const int signal = InterruptGuard::caught())
    return interrupted_error(signal, "mirror create", "the partial archive was removed");
  return Ok{};
}

// Copies one wheel entry into the tar under `top`, at the path the install would give it.
Status copy_entry(struct archive* in, struct archive_entry* entry, struct archive* out,
                  const std::string& top, const std::string& component,
                  const RepackProgress& progress) {
  const auto path = wheel_entry_path(archive_entry_pathname(entry), component, "share/licenses");
  if (path.empty() || archive_entry_filetype(entry) != AE_IFREG) return Ok{};
  std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> copy(archive_entry_new(),
                                                                              archive_entry_free);
  archive_entry_set_pathname(copy.get(), (top + "/" + path).c_str());
  archive_entry_set_filetype(copy.get(), AE_IFREG);
  // As the install does (install/extract.cpp): a wheel's programs are the files under bin/.
  const bool program = path.starts_with("bin/") || path.find("/bin/") != std::string::npos;
  archive_entry_set_perm(
      copy.get(), sanitized_mode(AE_IFREG, archive_entry_perm(entry) | (program ? 0111 : 0)));
  archive_entry_set_size(copy.get(), archive_entry_size(entry));
  archive_entry_set_mtime(copy.get(), archive_entry_mtime(entry), 0);
  if (archive_write_header(out, copy.get()) != ARCHIVE_OK) return repack_error(path, out);
  char buffer[1 << 16];
  la_ssize_t got = 0;
  while ((got = archive_read_data(in, buffer, sizeof buffer)) > 0) {
    if (archive_write_data(out, buffer, static_cast<size_t>(got)) != got)
      return repack_error(path, out);
    if (auto stop = stopped_by_signal(); !stop) return stop;
    progress(static_cast<std::uint64_t>(archive_filter_bytes(in, -1)));
  }
  if (got < 0) return repack_error(path, in);
  return Ok{};
}

// xz at preset 1 on every core: a mirror is written once and served on a LAN, where the few
// percent preset 6 saves do not pay for compressing several times slower (NVIDIA's own archives
// stay as they are: only wheels are repacked).
Status set_xz_options(struct archive* out) {
  archive_write_add_filter_xz(out);
  if (archive_write_set_filter_option(out, "xz", "compression-level", "1") != ARCHIVE_OK)
    return repack_error("xz", out);
  // Threads where liblzma has them; a library without its threaded encoder compresses alone.
  (void)archive_write_set_filter_option(out, "xz", "threads", "0");
  return Ok{};
}

// The wheel at `wheel` as NVIDIA packs a redist archive: <top>/bin/..., xz-compressed, written
// to a temporary name and renamed when complete (an interrupted repack leaves nothing).
Status repack(const fs::path& wheel, const fs::path& target, const std::string& top,
              const std::string& component, const RepackProgress& progress) {
  ArchivePtr in(archive_read_new(), archive_read_free);
  archive_read_support_format_zip(in.get());
  if (archive_read_open_filename(in.get(), wheel.c_str(), 1 << 16) != ARCHIVE_OK)
    return repack_error(wheel.string(), in.get());
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  const auto partial = target.string() + ".partial-" + std::to_string(::getpid());
  auto written = [&]() -> Status {
    ArchivePtr out(archive_write_new(), archive_write_free);
    archive_write_set_format_pax_restricted(out.get());
    if (auto xz = set_xz_options(out.get()); !xz) return xz;
    // The temporary name is this process's own, in the mirror directory being made.
    if (archive_write_open_filename(out.get(), partial.c_str()) !=
        ARCHIVE_OK)  // raw-write: own temporary
      return repack_error(target.string(), out.get());
    struct archive_entry* entry = nullptr;
    int status = ARCHIVE_OK;
    while ((status = archive_read_next_header(in.get(), &entry)) == ARCHIVE_OK) {
      if (auto copied = copy_entry(in.get(), entry, out.get(), top, component, progress); !copied)
        return copied;
    }
    if (status != ARCHIVE_EOF) return repack_error(wheel.string(), in.get());
    if (archive_write_close(out.get()) != ARCHIVE_OK)
      return repack_error(target.string(), out.get());
    if (::rename(partial.c_str(), target.c_str()) != 0)
      return make_error(ErrorKind::failure,
                        "cannot write " + target.string() + ": " + std::strerror(errno));
    return Ok{};
  }();
  if (!written) fs::remove(partial, ec);
  return written;
}

// Fetches one wheel into the download cache, checked against the index's sha256.
Status fetch_wheel(const InstallPlan& plan, const SelectedArchive& archive, const fs::path& cached,
                   const InstallSettings& settings) {
  fetch::ResumableStream stream(archive.url, cached, archive.file.size, settings.fetch);
  if (auto drained = stream.drain(); !drained) return drained.error();
  if (stream.sha256_hex() == archive.file.sha256) return Ok{};
  std::error_code ec;
  fs::remove(cached, ec);
  return make_error(ErrorKind::integrity,
                    "sha256 mismatch for " + archive.url + ": expected " + archive.file.sha256 +
                        ", got " + stream.sha256_hex(),
                    "the download was discarded; run the command again, or use another index (" +
                        plan.mirror + ")");
}

Result<Repacked> mirror_wheel(const fs::path& redist, const InstallPlan& plan,
                              const SelectedArchive& archive, const Store& store,
                              const InstallSettings& settings, const RepackProgress& progress) {
  const auto cached = store.downloads() / archive.file.relative_path;
  if (auto fetched = fetch_wheel(plan, archive, cached, settings); !fetched) return fetched.error();
  if (auto stop = stopped_by_signal(); !stop) return stop.error();
  const auto name = plan.product == "cudnn" ? std::string("cudnn") : archive.component;
  const auto suffix = plan.variant.empty() ? "" : "_" + plan.variant;
  const auto top = name + "-" + plan.platform + "-" + archive.version + suffix + "-archive";
  const auto relative = name + "/" + plan.platform + "/" + top + ".tar.xz";
  if (auto packed = repack(cached, redist / relative, top, archive.component, progress); !packed)
    return packed.error();
  auto sha = fetch::sha256_file(redist / relative);
  if (!sha) return sha.error();
  std::error_code ec;
  return Repacked{relative, *sha, fs::file_size(redist / relative, ec)};
}

json file_entry(const Repacked& packed) {
  return {{"relative_path", packed.relative_path},
          {"sha256", packed.sha256},
          {"md5", ""},
          {"size", std::to_string(packed.size)}};
}

// The manifest NVIDIA would serve for what was repacked: one component per toolkit wheel, or one
// "cudnn" component with a file per CUDA variant.
json manifest_of(const std::vector<InstallPlan>& plans,
                 const std::vector<std::vector<Repacked>>& packed) {
  const auto& first = plans.front();
  json doc = {{"release_date", utc_timestamp().substr(0, 10)},
              {"release_label", first.version},
              {"release_product", first.product}};
  for (size_t p = 0; p < plans.size(); ++p) {
    for (size_t a = 0; a < plans[p].archives.size(); ++a) {
      const auto& archive = plans[p].archives[a];
      if (first.product != "cudnn") {
        doc[archive.component] = {{"name", archive.component},
                                  {"license", "CUDA Toolkit"},
                                  {"version", archive.version},
                                  {first.platform, file_entry(packed[p][a])}};
        continue;
      }
      auto& cudnn = doc["cudnn"];
      cudnn["name"] = "NVIDIA CUDA Deep Neural Network library";
      cudnn["license"] = "cudnn";
      cudnn["version"] = archive.version;
      cudnn["cuda_variant"].push_back(plans[p].variant.substr(4));  // "cuda13" -> "13"
      cudnn[first.platform][plans[p].variant] = file_entry(packed[p][a]);
    }
  }
  return doc;
}

}  // namespace

Status mirror_from_wheels(const fs::path& dir, const std::vector<InstallPlan>& plans,
                          const Store& store, const InstallSettings& settings,
                          InstallObserver& observer) {
  if (plans.empty()) return Ok{};
  const auto redist = dir / plans.front().product / "redist";
  std::vector<std::pair<size_t, size_t>> work;
  std::vector<std::vector<Repacked>> packed(plans.size());
  for (size_t p = 0; p < plans.size(); ++p) {
    packed[p].resize(plans[p].archives.size());
    for (size_t a = 0; a < plans[p].archives.size(); ++a) work.emplace_back(p, a);
  }
  const InterruptGuard interrupt;
  auto done = for_each_in_parallel(
      work.size(), settings.jobs, "repacking the wheels", [&](size_t i, const FirstError&) {
        const auto [p, a] = work[i];
        const auto& archive = plans[p].archives[a];
        // The display counts the wheel's bytes as they are read for the repack.
        const auto progress = [&, i](std::uint64_t read) {
          observer.archive_progress(i, std::min(read, archive.file.size), archive.file.size);
        };
        auto result = mirror_wheel(redist, plans[p], archive, store, settings, progress);
        if (!result) return Status(result.error());
        packed[p][a] = std::move(*result);
        observer.archive_done(i);
        return Status(Ok{});
      });
  if (!done) return done;
  const auto path = redist / ("redistrib_" + plans.front().version + ".json");
  return write_file_atomically(path, manifest_of(plans, packed).dump(4) + "\n");
}

}  // namespace cudaenv::install
