#include "install/installer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/parallel.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "install/extract.hpp"
#include "install/interrupt.hpp"
#include "install/remote.hpp"
#include "install/writable.hpp"

namespace cudaenv::install {

namespace {

fs::path cache_file(const Store& store, const SelectedArchive& archive) {
  return store.downloads() / fs::path(archive.file.relative_path).filename();
}

std::string url_of(const InstallPlan& plan, const SelectedArchive& archive) {
  return archive.url.empty() ? archive_url(plan.mirror, plan.product, archive.file.relative_path)
                             : archive.url;
}

// Downloads (or reads from the download cache) and unpacks one archive into `destination`,
// checking its sha256 as the bytes pass.
Status unpack_archive(const InstallPlan& plan, size_t index, const Store& store,
                      const fs::path& destination, const InstallSettings& settings,
                      InstallObserver& observer, const FirstError& first) {
  const auto& archive = plan.archives[index];
  const auto url = url_of(plan, archive);
  const auto cached = cache_file(store, archive);
  // The download cache is shared between installs (and pruned by `cudaenv cache`): one process
  // at a time appends to or deletes a cache file, holding the lock beside it.
  auto cache_lock = InstallLock::acquire(download_lock_file(cached), {});
  if (!cache_lock) return cache_lock.error();
  auto fetch_options = settings.fetch;
  fetch_options.lock_cache_file = false;  // held above, with the check a deletion needs
  fetch_options.should_stop = [&] { return first.failed() || InterruptGuard::caught() != 0; };
  fetch::ResumableStream stream(url, cached, archive.file.size, fetch_options,
                                [&](std::uint64_t done, std::uint64_t total) {
                                  observer.archive_progress(index, done, total);
                                });
  const ChunkSource source = [&]() -> Result<std::string_view> {
    if (first.failed()) return make_error(ErrorKind::failure, "stopped: another archive failed");
    if (const int signal = InterruptGuard::caught())
      return interrupted_error(signal, "the download of " + url, "nothing was installed");
    return stream.next();
  };
  const auto drain = [&]() -> Status {
    while (true) {
      auto chunk = source();
      if (!chunk) return chunk.error();
      if (chunk->empty()) return Ok{};
    }
  };
  const auto max_unpacked = settings.max_unpacked_bytes > 0
                                ? settings.max_unpacked_bytes
                                : default_unpacked_cap(archive.file.size);
  auto extracted =
      extract(source, {destination, fs::path(archive.file.relative_path).filename().string(),
                       archive.component, "share/licenses", max_unpacked, plan.source == "pypi"});
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
    // Trailing bytes after the archive's end; more than the manifest promised is not kept.
    if (rest.error().kind == ErrorKind::integrity) fs::remove(cached, ec);
    return rest.error();
  }
  if (stream.sha256_hex() != archive.file.sha256) {
    fs::remove(cached, ec);  // a corrupt download is never resumed
    return make_error(ErrorKind::integrity,
                      "sha256 mismatch for " + url + ": expected " + archive.file.sha256 +
                          ", got " + stream.sha256_hex(),
                      "the download was discarded; run the command again, or use another mirror");
  }
  if (!extracted) return extracted.error();
  return Ok{};
}

// Where an archive's unpacked tree is kept: named by its digest and component, both checked
// (they come from a manifest or an index); nullopt when either is not a plain name.
std::optional<fs::path> unpacked_entry(const Store& store, const SelectedArchive& archive) {
  if (!untrusted::is_valid(untrusted::Field::sha256, archive.file.sha256) ||
      !untrusted::is_valid(untrusted::Field::component_name, archive.component))
    return std::nullopt;
  return store.unpacked() / (archive.file.sha256 + "." + archive.component);
}

Status link_error(const fs::path& path, int error) {
  return make_error(ErrorKind::failure,
                    "cannot place " + path.string() + ": " +
                        std::error_code(error, std::generic_category()).message(),
                    "check the free space and permissions of the cudaenv data root");
}

bool is_directory_at(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// An entry that does not fit what another archive of the install put there (a file where a
// directory is, or the other way round): the archive's fault, as unpacking both into one
// directory found it. Named as the archive names it ("<archive>/include/crt").
Error misfit_error(const std::string& archive_name, const fs::path& relative) {
  auto top = archive_name;
  for (const char* suffix : {".tar.xz", ".tar.gz", ".tgz", ".zip", ".whl"}) {
    if (top.ends_with(suffix)) top.erase(top.size() - std::string_view(suffix).size());
  }
  return make_error(ErrorKind::integrity,
                    "corrupt or hostile archive: " + text::printable(archive_name) + ": " +
                        text::printable(top + "/" + relative.string()) +
                        ": does not fit what another archive of the install put there",
                    "the archive is corrupt or hostile; nothing was installed");
}

// One file (or link) of the shared tree into the prefix: a hard link (no bytes copied), a copy
// where the prefix is on another filesystem or the file has too many links. A later archive's
// file of the same name replaces an earlier one's, as unpacking over it would; a directory
// there sets `misfit`, for the caller to report.
Status place_file(const fs::path& from, const fs::path& to, bool symlink_entry, bool& misfit) {
  const auto place = [&] {
    if (!symlink_entry) return ::link(from.c_str(), to.c_str());
    std::error_code ec;
    const auto target = fs::read_symlink(from, ec);
    if (ec) {
      errno = ec.value();
      return -1;
    }
    return ::symlink(target.c_str(), to.c_str());
  };
  if (place() == 0) return Ok{};
  if (errno == EEXIST) {
    if (is_directory_at(to)) {
      misfit = true;
      return Ok{};
    }
    ::unlink(to.c_str());
    if (place() == 0) return Ok{};
  }
  if (symlink_entry || (errno != EXDEV && errno != EMLINK && errno != EPERM))
    return link_error(to, errno);
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  return ec ? link_error(to, ec.value()) : Status{Ok{}};
}

// The shared tree of `entry` into `staging`: directories made, files linked, links recreated.
Status link_tree(const fs::path& entry, const fs::path& staging, const std::string& archive_name) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(entry, ec), end; !ec && it != end; it.increment(ec)) {
    const auto relative = it->path().lexically_relative(entry);
    const auto target = staging / relative;
    const auto status = it->symlink_status(ec);
    if (ec) break;
    bool misfit = false;
    if (fs::is_directory(status)) {
      if (::mkdir(target.c_str(), 0755) != 0) {
        if (errno != EEXIST) return link_error(target, errno);
        misfit = !is_directory_at(target);
      }
    } else if (auto placed = place_file(it->path(), target, fs::is_symlink(status), misfit);
               !placed) {
      return placed;
    }
    if (misfit) return misfit_error(archive_name, relative);
  }
  if (ec) return link_error(entry, ec.value());
  return Ok{};
}

// The shared tree's files lose their write bits: every prefix links the same inodes, so a file
// changed in one prefix would change in all. Its directories stay writable, for removal.
Status make_read_only(const fs::path& tree) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(tree, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::chmod(it->path().c_str(), st.st_mode & 07555) != 0) return link_error(it->path(), errno);
  }
  if (ec) return link_error(tree, ec.value());
  return Ok{};
}

// Unpacks the archive into the shared store once (a partial directory renamed into place when
// complete, under the tree's lock so two installs never both unpack it), then links it into
// `staging`.
Status install_archive(const InstallPlan& plan, size_t index, const Store& store,
                       const fs::path& staging, const InstallSettings& settings,
                       InstallObserver& observer, const FirstError& first) {
  const auto& archive = plan.archives[index];
  const auto entry = unpacked_entry(store, archive);
  if (!entry) {
    if (auto unpacked = unpack_archive(plan, index, store, staging, settings, observer, first);
        !unpacked)
      return unpacked;
    observer.archive_done(index);
    return Ok{};
  }
  // Held while the tree is unpacked or linked: `cache prune` removes a tree only under it.
  if (auto made = ensure_writable_directory(store.unpacked()); !made) return made;
  auto lock = InstallLock::acquire(entry->string() + ".lock", {});
  if (!lock) return lock.error();
  std::error_code ec;
  if (fs::is_directory(*entry, ec)) {
    observer.archive_progress(index, archive.file.size, archive.file.size);
  } else {
    const auto partial = store.unpacked() / (".partial-" + entry->filename().string() + "-" +
                                             std::to_string(::getpid()));
    fs::remove_all(partial, ec);
    if (::mkdir(partial.c_str(), 0755) != 0) return link_error(partial, errno);
    auto unpacked = unpack_archive(plan, index, store, partial, settings, observer, first);
    if (unpacked) unpacked = make_read_only(partial);
    if (unpacked && ::rename(partial.c_str(), entry->c_str()) != 0)
      unpacked = link_error(*entry, errno);
    if (!unpacked) {
      fs::remove_all(partial, ec);
      return unpacked;
    }
  }
  const auto archive_name = fs::path(archive.file.relative_path).filename().string();
  if (auto linked = link_tree(*entry, staging, archive_name); !linked) return linked;
  observer.archive_done(index);
  return Ok{};
}

Status install_all(const InstallPlan& plan, const Store& store, const fs::path& staging,
                   const InstallSettings& settings, InstallObserver& observer) {
  return for_each_in_parallel(plan.archives.size(), settings.jobs, "installing the archives",
                              [&](size_t index, const FirstError& first) {
                                return install_archive(plan, index, store, staging, settings,
                                                       observer, first);
                              });
}

Receipt receipt_of(const InstallPlan& plan) {
  Receipt receipt{plan.product,    plan.version, plan.platform, plan.variant, plan.mirror,
                  utc_timestamp(), {},           plan.source};
  for (const auto& archive : plan.archives) {
    receipt.components.push_back({archive.component, archive.version, archive.file.sha256,
                                  url_of(plan, archive), archive.file.size});
  }
  return receipt;
}

// NVIDIA's toolkits carry a version.json that tools (CMake's FindCUDAToolkit among them) read;
// the redist archives do not, so the install writes one in the same shape. Whatever an archive
// put under that name (a link, at the top of the prefix) is replaced, never written through.
Status write_version_json(const fs::path& prefix, const InstallPlan& plan) {
  if (plan.product != "cuda") return Ok{};
  nlohmann::ordered_json doc;
  doc["cuda"] = {{"name", "CUDA SDK"}, {"version", plan.version}};
  for (const auto& archive : plan.archives) doc[archive.component] = {{"version", archive.version}};
  return write_new_file(prefix, "version.json", doc.dump(3) + "\n");
}

std::string system_reason() { return std::error_code(errno, std::generic_category()).message(); }

// No mode an archive asked for survives unsanitized: also the directories libarchive made on
// its own for entries whose parents the archive did not list. Files only ever lose bits: those
// linked from the shared unpacked store stay read-only.
Status sanitize_modes(const fs::path& prefix) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(prefix, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    const mode_t allowed = sanitized_mode(st.st_mode & S_IFMT, st.st_mode);  // S_IF* == AE_IF*
    const mode_t mode = st.st_mode & 07777;
    const mode_t wanted = S_ISDIR(st.st_mode) ? allowed : mode & allowed;
    if (mode != wanted && ::chmod(it->path().c_str(), wanted) != 0) {
      return make_error(ErrorKind::failure,
                        "cannot set the mode of " + it->path().string() + ": " + system_reason());
    }
  }
  if (ec)
    return make_error(ErrorKind::failure, "cannot read " + prefix.string() + ": " + ec.message());
  return Ok{};
}

// Only the install itself can enter its staging directory until it is complete.
Status make_staging(const fs::path& staging) {
  std::error_code ec;
  fs::create_directories(staging.parent_path(), ec);
  if (ec || ::mkdir(staging.c_str(), 0700) != 0) {
    return make_error(
        ErrorKind::failure,
        "cannot create " + staging.string() + ": " + (ec ? ec.message() : system_reason()),
        "check the permissions of the cudaenv data root");
  }
  return Ok{};
}

// "libcudart.so.13" -> "libcudart.so"; empty for a name that is not a versioned library.
std::string development_name(const std::string& file) {
  const auto at = file.find(".so.");
  if (at == std::string::npos || !text::starts_with(file, "lib")) return {};
  const auto suffix = std::string_view(file).substr(at + 4);
  const bool versioned = !suffix.empty() && suffix.front() != '.' && suffix.back() != '.' &&
                         suffix.find_first_not_of("0123456789.") == std::string_view::npos;
  return versioned ? file.substr(0, at + 3) : std::string();
}

// NVIDIA's wheels carry only the versioned libraries (lib/libcudart.so.13), the redist archives
// also the unversioned names the linker looks for (-lcudart, find_package(CUDAToolkit)): each
// one missing links to the shortest versioned name, as the redist layout has it.
void link_development_names(const fs::path& prefix) {
  std::map<std::string, std::string> links;  // libX.so -> libX.so.N
  std::error_code ec;
  for (fs::directory_iterator it(prefix / "lib", ec), end; !ec && it != end; it.increment(ec)) {
    const auto file = it->path().filename().string();
    const auto name = development_name(file);
    if (name.empty()) continue;
    auto& target = links[name];
    if (target.empty() || file.size() < target.size()) target = file;
  }
  for (const auto& [name, target] : links) {
    if (!fs::exists(fs::symlink_status(prefix / "lib" / name, ec)))
      fs::create_symlink(target, prefix / "lib" / name, ec);
  }
}

Status finish_staging(const fs::path& staging, const InstallPlan& plan) {
  link_development_names(staging);
  link_lib64(staging);
  if (auto written = write_version_json(staging, plan); !written) return written;
  if (auto written = write_receipt(staging, receipt_of(plan)); !written) return written;
  if (auto modes = sanitize_modes(staging); !modes) return modes;
  return Ok{};
}

Error replace_error(const fs::path& target, const std::string& why) {
  return make_error(ErrorKind::failure, "cannot replace " + target.string() + ": " + why,
                    "the installed toolkit is unchanged; run the command again");
}

// Where two directories cannot be exchanged in one step: the old prefix steps aside, the new
// one moves in, and the old one comes back if that fails (or at the next install, if killed).
Status replace_in_two_steps(const fs::path& staging, const fs::path& target) {
  const auto aside = target.parent_path() /
                     (".replaced-" + target.filename().string() + "-" + std::to_string(::getpid()));
  if (std::rename(target.c_str(), aside.c_str()) != 0)
    return replace_error(target, system_reason());
  if (std::rename(staging.c_str(), target.c_str()) != 0) {
    const auto why = system_reason();
    std::rename(aside.c_str(), target.c_str());
    return replace_error(target, why);
  }
  std::error_code ec;
  fs::remove_all(aside, ec);
  return Ok{};
}

// Moves the complete staging directory into place. A reinstall exchanges the two directories
// in one rename (RENAME_EXCHANGE): at every instant the old or the new toolkit is in place.
Status commit(const fs::path& staging, const fs::path& target, bool replace) {
  std::error_code ec;
  if (!replace || !fs::exists(target, ec)) {
    if (std::rename(staging.c_str(), target.c_str()) != 0) {
      return make_error(ErrorKind::failure,
                        "cannot move the install into " + target.string() + ": " + system_reason());
    }
    return Ok{};
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staging, ec);  // now the old prefix, out of sight
    return Ok{};
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return replace_error(target, system_reason());
  return replace_in_two_steps(staging, target);
}

}  // namespace

void link_lib64(const fs::path& prefix) {
  std::error_code ec;
  const bool has_lib = fs::is_directory(prefix / "lib", ec);
  const bool has_lib64 = fs::exists(fs::symlink_status(prefix / "lib64", ec));
  if (has_lib && !has_lib64) fs::create_directory_symlink("lib", prefix / "lib64", ec);
  if (!has_lib && has_lib64) fs::create_directory_symlink("lib64", prefix / "lib", ec);
}

Status prepare_store(const Store& store, const std::string& product) {
  if (auto downloads = ensure_writable_directory(store.downloads()); !downloads) return downloads;
  return ensure_writable_directory(product == "cudnn" ? store.cudnn() : store.toolkits());
}

Result<InstallOutcome> run_install(const InstallPlan& plan, const Store& store,
                                   const InstallSettings& settings, InstallObserver& observer) {
  if (auto writable = prepare_store(store, plan.product); !writable) return writable.error();
  const InterruptGuard interrupt;
  const auto what = "the install of " + plan.target.string();
  const auto stopped = [&](int signal) {
    return interrupted_error(signal, what, "nothing was installed");
  };
  const auto parent = plan.target.parent_path();
  const auto name = plan.target.filename().string();
  auto lock = InstallLock::acquire(
      parent / (".lock-" + name), [&] { observer.waiting_for_lock(); },
      [&](const std::string& note) { observer.lock_taken_over(note); });
  if (const int signal = InterruptGuard::caught()) return stopped(signal);
  if (!lock) return lock.error();
  remove_stale_staging(parent, name);  // first: it may put back a prefix a killed run set aside
  std::error_code ec;
  if (fs::exists(plan.target / receipt_file_name, ec) && !settings.force) {
    if (auto receipt = read_receipt(plan.target); !receipt) return receipt.error();
    return InstallOutcome::already_installed;
  }
  const auto staging = parent / (".staging-" + name + "-" + std::to_string(::getpid()));
  if (auto made = make_staging(staging); !made) return made.error();
  auto status = install_all(plan, store, staging, settings, observer);
  if (status) status = finish_staging(staging, plan);
  if (status && ::chmod(staging.c_str(), 0755) != 0)
    status = make_error(ErrorKind::failure, "cannot set the mode of " + staging.string());
  // A signal that arrived after the last chunk still cancels: nothing is committed.
  if (const int signal = InterruptGuard::caught(); signal != 0 && status) status = stopped(signal);
  if (status) status = commit(staging, plan.target, settings.force);
  if (!status) {
    fs::remove_all(staging, ec);
    if (const int signal = InterruptGuard::caught()) return stopped(signal);
    return status.error();
  }
  return InstallOutcome::installed;
}

}  // namespace cudaenv::install
