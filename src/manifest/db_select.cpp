// Which database is in use: the compiled-in one, a whole database `cudaenv db update` installed
// in the data root, or single files placed there by hand.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include <sys/stat.h>

#include "core/fd.hpp"
#include "core/ownership.hpp"
#include "manifest/db_index.hpp"
#include "manifest/load.hpp"

namespace cudaenv::manifest {

namespace fs = std::filesystem;

namespace {

// Whoever writes the database decides which toolkits users install and run.
const ownership::Subject database_subject{
    "database directory", "whoever can write it chooses the toolkits cudaenv installs",
    "remove it to use the compiled-in database, or set CUDAENV_ROOT to a directory you own"};
const ownership::Subject database_file_subject{"database file", database_subject.consequence,
                                               database_subject.alternative};

std::vector<ManifestFile> over_embedded(const std::vector<ManifestFile>& replacements) {
  std::vector<ManifestFile> files = embedded_manifests();
  for (const auto& replacement : replacements) {
    auto same = std::find_if(files.begin(), files.end(),
                             [&](const ManifestFile& f) { return f.name == replacement.name; });
    if (same != files.end())
      *same = replacement;
    else
      files.push_back(replacement);
  }
  return files;
}

Error unreadable(const fs::path& path, const std::string& why) {
  return make_error(ErrorKind::failure, "cannot read " + path.string() + ": " + why,
                    "run cudaenv db update again, or remove " + path.parent_path().string() +
                        " to use the compiled-in database");
}

// A whole regular file of at most db_max_file_bytes; nothing else is read or waited on.
Result<std::string> read_database_file(const fs::path& path) {
  const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  const int fd = file.get();
  if (fd < 0) return unreadable(path, std::error_code(errno, std::generic_category()).message());
  struct stat status {};
  std::string text;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode))
    return unreadable(path, "not a regular file");
  if (static_cast<std::uint64_t>(status.st_size) > db_max_file_bytes)
    return unreadable(path, "larger than " + std::to_string(db_max_file_bytes) + " bytes");
  text.resize(static_cast<std::size_t>(status.st_size));
  std::size_t done = 0;
  while (done < text.size()) {
    const auto got = ::read(fd, text.data() + done, text.size() - done);
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  return text;
}

Result<ManifestFile> read_trusted_file(const fs::path& path, const std::string& name) {
  if (auto trusted = ownership::check_path(path, database_file_subject); !trusted)
    return trusted.error();
  auto text = read_database_file(path);
  if (!text) return text.error();
  return ManifestFile{name, std::move(*text), path.string()};
}

Result<SelectedDatabase> compiled_in(std::string note = {}) {
  auto db = load_database(embedded_manifests());
  if (!db) return db.error();
  DatabaseOrigin origin;
  origin.revision = db->revision;
  origin.date = date_of_revision(db->revision);
  origin.note = std::move(note);
  return SelectedDatabase{std::move(*db), std::move(origin), embedded_manifests()};
}

std::string embedded_revision() {
  auto db = load_database(embedded_manifests());
  return db ? db->revision : std::string{};
}

// A database `cudaenv db update` installed: every file its record lists, read whole.
Result<SelectedDatabase> downloaded(const fs::path& directory) {
  const auto record_path = directory / db_record_name;
  auto record_text = read_trusted_file(record_path, db_record_name);
  if (!record_text) return record_text.error();
  auto record = parse_db_record(record_text->text, record_path.string());
  if (!record) return unreadable(record_path, record.error().message);
  const auto builtin = embedded_revision();
  if (compare_revisions(record->index.revision, builtin) <= 0) {
    return compiled_in("the database in " + directory.string() + " (revision " +
                       record->index.revision + ") is not newer than the compiled-in one (" +
                       builtin + ")");
  }
  std::vector<ManifestFile> files;
  for (const auto& file : record->index.files) {
    auto read = read_trusted_file(directory / file.name, file.name);
    if (!read) return read.error();
    if (read->text.size() != file.size)
      return unreadable(directory / file.name, "not the size its record lists");
    files.push_back(std::move(*read));
  }
  auto db = load_over_embedded(files);
  if (!db) return db.error();
  DatabaseOrigin origin{DatabaseOrigin::Kind::downloaded,
                        record->index.revision,
                        record->index.date,
                        directory,
                        record->url,
                        record->updated_at,
                        {},
                        {}};
  return SelectedDatabase{std::move(*db), std::move(origin), over_embedded(files)};
}

// Files placed in the data root by hand: each replaces its compiled-in namesake when newer.
Result<SelectedDatabase> local_copies(const fs::path& directory) {
  std::vector<ManifestFile> replacements;
  std::vector<std::string> used;
  for (const auto& file : embedded_manifests()) {
    const auto path = directory / file.name;
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    auto candidate = read_trusted_file(path, file.name);
    if (!candidate) return candidate.error();
    auto revision = manifest_revision(*candidate);
    if (!revision) return revision.error();
    auto builtin = manifest_revision(file);
    if (builtin && compare_revisions(*revision, *builtin) > 0) {
      used.push_back(file.name);
      replacements.push_back(std::move(*candidate));
    }
  }
  if (replacements.empty()) return compiled_in();
  auto db = load_over_embedded(replacements);
  if (!db) return db.error();
  DatabaseOrigin origin;
  origin.kind = DatabaseOrigin::Kind::local_copies;
  origin.revision = db->revision;
  origin.date = date_of_revision(db->revision);
  origin.directory = directory;
  origin.local_files = std::move(used);
  return SelectedDatabase{std::move(*db), std::move(origin), over_embedded(replacements)};
}

}  // namespace

Result<Database> load_over_embedded(const std::vector<ManifestFile>& replacements) {
  return load_database(over_embedded(replacements));
}

Result<SelectedDatabase> load_selected_database(const fs::path& data_root) {
  const auto directory = data_root / "manifests";
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return compiled_in();
  if (auto trusted = ownership::check_path(directory, database_subject); !trusted)
    return trusted.error();
  if (fs::exists(directory / db_record_name, ec)) return downloaded(directory);
  return local_copies(directory);
}

Result<Database> load_default_database(const fs::path& data_root) {
  auto selected = load_selected_database(data_root);
  if (!selected) return selected.error();
  return std::move(selected->db);
}

}  // namespace cudaenv::manifest
