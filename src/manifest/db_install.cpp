#include "manifest/db_install.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/safe_write.hpp"
#include "manifest/load.hpp"

namespace cudaenv::manifest {

namespace fs = std::filesystem;

namespace {

constexpr const char* staging_prefix = ".manifests-staging-";
constexpr const char* aside_prefix = ".manifests-old-";

std::string system_reason() { return std::error_code(errno, std::generic_category()).message(); }

Error install_error(const std::string& what) {
  return make_error(ErrorKind::failure, what,
                    "the database in use is unchanged; run cudaenv db update again");
}

// fsync on a file or a directory: what is renamed into place is on disk first.
Status flush(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return install_error("cannot open " + path.string() + ": " + system_reason());
  if (::fsync(fd.get()) != 0)
    return install_error("cannot flush " + path.string() + ": " + system_reason());
  if (auto closed = fd.close(path.string()); !closed) return install_error(closed.error().message);
  return Ok{};
}

// The record is written like every file cudaenv writes in place (core/safe_write.hpp): never
// through a name something else put in the staging directory.
Status write_file(const fs::path& path, const std::string& text) {
  if (auto written = write_file_atomically(path, text, {0644, CreateParents::no}); !written)
    return install_error(written.error().message);
  return Ok{};
}

Result<std::string> read_staged(const fs::path& path) {
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) return install_error("cannot read " + path.string() + ": " + system_reason());
  std::string text(static_cast<std::size_t>(db_max_file_bytes) + 1, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), in));
  std::fclose(in);
  return text;
}

// Moves the old database out of the way and the new one in; the old one comes back on failure.
Status replace_in_two_steps(const fs::path& staging, const fs::path& target,
                            const fs::path& aside) {
  if (std::rename(target.c_str(), aside.c_str()) != 0)
    return install_error("cannot move " + target.string() + " aside: " + system_reason());
  if (std::rename(staging.c_str(), target.c_str()) != 0) {
    const auto why = system_reason();
    std::rename(aside.c_str(), target.c_str());
    return install_error("cannot move the new database into " + target.string() + ": " + why);
  }
  return Ok{};
}

// After this, `target` holds the new database and `aside` (if anything) the old one.
Status swap_into_place(const fs::path& staging, const fs::path& target, const fs::path& aside) {
  std::error_code ec;
  if (!fs::exists(target, ec)) {
    if (std::rename(staging.c_str(), target.c_str()) != 0)
      return install_error("cannot move the new database into " + target.string() + ": " +
                           system_reason());
    return Ok{};
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    if (std::rename(staging.c_str(), aside.c_str()) != 0) fs::remove_all(staging, ec);
    return Ok{};
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return install_error("cannot replace " + target.string() + ": " + system_reason());
  return replace_in_two_steps(staging, target, aside);
}

// The old database: deleted when an update installed it, kept when it was placed by hand.
Result<fs::path> retire_old(const fs::path& aside, const fs::path& data_root) {
  std::error_code ec;
  if (!fs::exists(aside, ec)) return fs::path{};
  if (fs::exists(aside / db_record_name, ec)) {
    fs::remove_all(aside, ec);
    return fs::path{};
  }
  const auto kept = data_root / ("manifests.local-" + std::to_string(::time(nullptr)));
  if (std::rename(aside.c_str(), kept.c_str()) != 0) return aside;  // kept where it is
  return kept;
}

}  // namespace

Result<fs::path> make_db_staging(const fs::path& data_root) {
  std::error_code ec;
  fs::create_directories(data_root, ec);
  for (fs::directory_iterator it(data_root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    const bool leftover = name.rfind(staging_prefix, 0) == 0 ||
                          (name.rfind(aside_prefix, 0) == 0 &&
                           fs::exists(it->path() / db_record_name));  // a database, not notes
    if (leftover) fs::remove_all(it->path(), ec);
  }
  const auto staging = data_root / (staging_prefix + std::to_string(::getpid()));
  if (::mkdir(staging.c_str(), 0700) != 0) {
    return make_error(ErrorKind::failure,
                      "cannot create " + staging.string() + ": " + system_reason(),
                      "check the permissions of the cudaenv data root");
  }
  return staging;
}

Status check_staged_database(const fs::path& staging, const DbIndex& index) {
  std::vector<ManifestFile> files;
  for (const auto& file : index.files) {
    auto text = read_staged(staging / file.name);
    if (!text) return text.error();
    files.push_back({file.name, std::move(*text),
                     file.name + " (downloaded, revision " + index.revision + ")"});
  }
  for (const auto& builtin : embedded_manifests()) {
    if (std::none_of(index.files.begin(), index.files.end(),
                     [&](const DbFile& f) { return f.name == builtin.name; })) {
      return make_error(
          ErrorKind::integrity,
          "the published database (revision " + index.revision + ") lacks " + builtin.name,
          "publish a complete database (cudaenv mirror create), or use another "
          "--mirror");
    }
  }
  auto db = load_over_embedded(files);
  if (!db) {
    // A file that matches its sha256 but does not load: the publication is damaged.
    return make_error(ErrorKind::integrity,
                      "the downloaded database does not load: " + db.error().message,
                      "the database in use is unchanged; publish the database again (cudaenv "
                      "mirror create), or use another --mirror");
  }
  if (db->revision != index.revision) {
    return make_error(ErrorKind::integrity,
                      "the downloaded files are revision " + db->revision + " but the index says " +
                          index.revision,
                      "the mirror's database is damaged: publish it again or use another "
                      "--mirror");
  }
  return Ok{};
}

Result<DbCommit> commit_database(const fs::path& staging, const fs::path& data_root,
                                 const DbRecord& record) {
  if (auto written = write_file(staging / db_record_name, db_record_json(record)); !written)
    return written.error();
  for (const auto& file : record.index.files) {
    // Whatever the umask: the loader refuses database files others can write.
    if (::chmod((staging / file.name).c_str(), 0644) != 0)
      return install_error("cannot set the mode of " + (staging / file.name).string());
    if (auto flushed = flush(staging / file.name); !flushed) return flushed.error();
  }
  ::chmod((staging / db_record_name).c_str(), 0644);
  if (auto flushed = flush(staging / db_record_name); !flushed) return flushed.error();
  if (::chmod(staging.c_str(), 0755) != 0)
    return install_error("cannot set the mode of " + staging.string() + ": " + system_reason());
  if (auto flushed = flush(staging); !flushed) return flushed.error();
  // Not a name another process can guess and plant a link or directory under beforehand.
  const auto aside =
      data_root / (aside_prefix + std::to_string(::getpid()) + temporary_name_for("").substr(1));
  if (auto swapped = swap_into_place(staging, data_root / "manifests", aside); !swapped)
    return swapped.error();
  (void)flush(data_root);  // the rename itself; the new database is in place either way
  auto kept = retire_old(aside, data_root);
  return DbCommit{kept ? *kept : fs::path{}};
}

}  // namespace cudaenv::manifest
