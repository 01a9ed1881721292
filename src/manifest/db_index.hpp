#pragma once
// The compatibility database as a mirror publishes it: <mirror>/cudaenv/db/index.json names a
// revision, a date and every file with its sha256 and size; the files themselves lie below
// <mirror>/cudaenv/db/<revision>/. `cudaenv db update` keeps the index it installed, with where
// and when it came from, as <data root>/manifests/database.json. docs/database.md has the format.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::manifest {

constexpr int db_index_format = 1;
// Bounds on what an index may name: a database is a handful of TOML files of some KiB each.
constexpr std::size_t db_max_files = 32;
constexpr std::uint64_t db_max_file_bytes = std::uint64_t{4} << 20;
constexpr std::uint64_t db_max_index_bytes = std::uint64_t{64} << 10;
// The name of the installed database's record inside <data root>/manifests/.
constexpr const char* db_record_name = "database.json";

struct DbFile {
  std::string name;  // "cuda.toml"
  std::string sha256;
  std::uint64_t size = 0;
};

struct DbIndex {
  std::string revision;  // "2026-11-29", "2026-11-29.2": what orders databases
  std::string date;      // YYYY-MM-DD: the day its facts were last checked
  std::vector<DbFile> files;
};

// An installed database: the index it was installed from, and where and when.
struct DbRecord {
  DbIndex index;
  std::string url;         // the index's URL
  std::string updated_at;  // UTC, 2026-11-30T17:02:11Z
};

// Parses and checks an index (every field, the file names, hex digests and sizes; the revision
// and the date through untrusted.hpp's grammars, so a serial is at most 4 digits; the date not
// later than the day the revision names). Errors are ErrorKind::integrity naming `origin` and the
// field.
Result<DbIndex> parse_db_index(std::string_view text, const std::string& origin);

// How far ahead of today an index's date (and its revision's) may be: time zones, a clock a
// little fast. A revision far ahead would rank above every later one and freeze all updates.
constexpr std::chrono::days db_max_days_ahead{1};
// Ok when neither the index's date nor its revision's date is more than db_max_days_ahead after
// `now`; else ErrorKind::integrity naming `origin` and the field.
Status check_not_in_future(const DbIndex& index, const std::string& origin,
                           std::chrono::system_clock::time_point now);
std::string db_index_json(const DbIndex& index);

Result<DbRecord> parse_db_record(std::string_view text, const std::string& origin);
std::string db_record_json(const DbRecord& record);

// Orders revisions by their runs of digits read as numbers: "2026-11-29" < "2026-11-29.2" <
// "2026-12-01". Negative, zero or positive, like strcmp.
int compare_revisions(std::string_view a, std::string_view b);

// "2026-11-29" as a day; nullopt when it is not a valid YYYY-MM-DD date.
std::optional<std::chrono::sys_days> parse_date(std::string_view text);
// The date a revision starts with ("2026-11-29.2" -> "2026-11-29"), or "" when it starts with none.
std::string date_of_revision(std::string_view revision);
// Whole days from `date` to `now` (negative for a date in the future); nullopt for a bad date.
std::optional<long> age_in_days(std::string_view date, std::chrono::system_clock::time_point now);
// A database this many days old gets a note from resolve, doctor and `cudaenv db`.
constexpr long db_stale_after_days = 90;
// "the compatibility database (revision R) is dated D, N days ago: ..." when the database dated
// `date` is older than db_stale_after_days; nullopt when it is younger or has no date.
std::optional<std::string> stale_database_note(std::string_view revision, std::string_view date,
                                               std::chrono::system_clock::time_point now);

// The current UTC time as 2026-11-30T17:02:11Z.
std::string utc_timestamp(std::chrono::system_clock::time_point now);

}  // namespace cudaenv::manifest
