#include "manifest/db_index.hpp"

#include <ctime>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "core/untrusted.hpp"

namespace cudaenv::manifest {

namespace {

using json = nlohmann::json;

Error index_error(const std::string& origin, const std::string& problem) {
  return make_error(ErrorKind::integrity, origin + ": " + problem,
                    "the mirror's database is damaged: publish it again (cudaenv mirror create) "
                    "or use another --mirror");
}

// A string field matching `pattern`, or an error naming the field.
Result<std::string> checked_string(const json& object, const char* key, const std::regex& pattern,
                                   const std::string& origin, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    return index_error(origin, where + key + " is missing or not a string");
  const auto& value = it->get_ref<const std::string&>();
  if (value.size() > 128 || !std::regex_match(value, pattern))
    return index_error(origin, where + key + " is malformed");
  return value;
}

Result<DbFile> parse_file_entry(const json& entry, std::size_t position,
                                const std::string& origin) {
  static const std::regex name_pattern(R"([a-z0-9_-]{1,64}\.toml)");
  static const std::regex sha_pattern(R"([0-9a-f]{64})");
  static const std::regex any(R"(.*)");
  const auto where = "files[" + std::to_string(position) + "].";
  if (!entry.is_object()) return index_error(origin, where + " is not an object");
  auto name = checked_string(entry, "name", name_pattern, origin, where);
  if (!name) return name.error();
  auto sha = checked_string(entry, "sha256", sha_pattern, origin, where);
  if (!sha) return sha.error();
  const auto size = entry.find("size");
  if (size == entry.end() || !size->is_number_unsigned() || size->get<std::uint64_t>() == 0 ||
      size->get<std::uint64_t>() > db_max_file_bytes) {
    return index_error(origin, where + "size must be a whole number from 1 to " +
                                   std::to_string(db_max_file_bytes));
  }
  return DbFile{*name, *sha, size->get<std::uint64_t>()};
}

Result<std::vector<DbFile>> parse_file_list(const json& document, const std::string& origin) {
  const auto files = document.find("files");
  if (files == document.end() || !files->is_array() || files->empty() ||
      files->size() > db_max_files) {
    return index_error(origin, "files must list 1 to " + std::to_string(db_max_files) + " files");
  }
  std::vector<DbFile> parsed;
  std::set<std::string> names;
  for (std::size_t i = 0; i < files->size(); ++i) {
    auto entry = parse_file_entry((*files)[i], i, origin);
    if (!entry) return entry.error();
    if (!names.insert(entry->name).second)
      return index_error(origin, "files lists " + entry->name + " twice");
    parsed.push_back(std::move(*entry));
  }
  return parsed;
}

// A string field of one of untrusted.hpp's grammars, or an error naming `origin` and the key.
Result<std::string> checked_field(const json& object, const char* key, untrusted::Field field,
                                  const std::string& origin) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    return index_error(origin, std::string(key) + " is missing or not a string");
  const auto& value = it->get_ref<const std::string&>();
  if (auto valid = untrusted::check(field, value, origin + ": " + key); !valid)
    return valid.error();
  return value;
}

// A revision holds facts checked up to its own day: an index dated later disagrees with it.
Status check_date_against_revision(const std::string& date, const std::string& revision,
                                   const std::string& origin) {
  if (date <= date_of_revision(revision)) return Ok{};  // YYYY-MM-DD orders as text
  return index_error(origin, "date " + date + " is later than the day its revision " + revision +
                                 " names: a revision carries facts checked up to its own day");
}

Result<DbIndex> parse_index_object(const json& document, const std::string& origin) {
  if (!document.is_object()) return index_error(origin, "not a JSON object");
  const auto format = document.find("format");
  if (format == document.end() || !format->is_number_integer())
    return index_error(origin, "format is missing or not a whole number");
  if (format->get<long long>() != db_index_format) {
    return make_error(ErrorKind::failure,
                      origin + ": format " + std::to_string(format->get<long long>()) +
                          " is not the one this cudaenv reads (" + std::to_string(db_index_format) +
                          ")",
                      "update cudaenv itself, or publish the database with this cudaenv");
  }
  auto revision = checked_field(document, "revision", untrusted::Field::revision, origin);
  if (!revision) return revision.error();
  auto date = checked_field(document, "date", untrusted::Field::date, origin);
  if (!date) return date.error();
  if (auto agrees = check_date_against_revision(*date, *revision, origin); !agrees)
    return agrees.error();
  auto files = parse_file_list(document, origin);
  if (!files) return files.error();
  return DbIndex{*revision, *date, std::move(*files)};
}

json index_object(const DbIndex& index) {
  json files = json::array();
  for (const auto& f : index.files)
    files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
  return {{"format", db_index_format},
          {"revision", index.revision},
          {"date", index.date},
          {"files", files}};
}

// The runs of digits in `text`, as numbers.
std::vector<unsigned long long> numbers_in(std::string_view text) {
  std::vector<unsigned long long> numbers;
  bool in_number = false;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      in_number = false;
      continue;
    }
    if (!in_number) numbers.push_back(0);
    in_number = true;
    auto& last = numbers.back();
    last = last > 1'000'000'000'000ULL ? last : last * 10 + static_cast<unsigned>(c - '0');
  }
  return numbers;
}

}  // namespace

Result<DbIndex> parse_db_index(std::string_view text, const std::string& origin) {
  const auto document = json::parse(text, nullptr, false);
  if (document.is_discarded()) return index_error(origin, "not valid JSON");
  return parse_index_object(document, origin);
}

Status check_not_in_future(const DbIndex& index, const std::string& origin,
                           std::chrono::system_clock::time_point now) {
  const auto latest = std::chrono::floor<std::chrono::days>(now) + db_max_days_ahead;
  const auto ahead = [&](const std::string& date) {
    const auto day = parse_date(date);
    return !day || *day > latest;
  };
  const auto hint =
      "a database dated ahead of today would rank above every later one and stop "
      "all updates: the mirror's clock or database is wrong, or it is hostile; use "
      "another --mirror";
  if (ahead(index.date))
    return make_error(ErrorKind::integrity,
                      origin + ": date " + index.date + " is more than a day in the future", hint);
  if (ahead(date_of_revision(index.revision)))
    return make_error(
        ErrorKind::integrity,
        origin + ": revision " + index.revision + " is dated more than a day in the future", hint);
  return Ok{};
}

std::string db_index_json(const DbIndex& index) { return index_object(index).dump(2) + "\n"; }

Result<DbRecord> parse_db_record(std::string_view text, const std::string& origin) {
  const auto document = json::parse(text, nullptr, false);
  if (document.is_discarded()) return index_error(origin, "not valid JSON");
  auto index = parse_index_object(document, origin);
  if (!index) return index.error();
  DbRecord record{std::move(*index), {}, {}};
  const auto source = document.find("source");
  if (source != document.end() && source->is_object()) {
    record.url = source->value("url", std::string{});
    record.updated_at = source->value("updated_at", std::string{});
  }
  return record;
}

std::string db_record_json(const DbRecord& record) {
  auto document = index_object(record.index);
  document["source"] = {{"url", record.url}, {"updated_at", record.updated_at}};
  return document.dump(2) + "\n";
}

int compare_revisions(std::string_view a, std::string_view b) {
  const auto left = numbers_in(a);
  const auto right = numbers_in(b);
  if (left != right) return left < right ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::optional<std::chrono::sys_days> parse_date(std::string_view text) {
  static const std::regex pattern(R"(([0-9]{4})-([0-9]{2})-([0-9]{2}))");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(text.begin(), text.end(), match, pattern)) return std::nullopt;
  const std::chrono::year_month_day day{std::chrono::year(std::stoi(match[1].str())),
                                        std::chrono::month(std::stoul(match[2].str())),
                                        std::chrono::day(std::stoul(match[3].str()))};
  if (!day.ok()) return std::nullopt;
  return std::chrono::sys_days(day);
}

std::string date_of_revision(std::string_view revision) {
  const auto prefix = revision.substr(0, 10);
  return parse_date(prefix) ? std::string(prefix) : std::string{};
}

std::optional<long> age_in_days(std::string_view date, std::chrono::system_clock::time_point now) {
  const auto day = parse_date(date);
  if (!day) return std::nullopt;
  const auto today = std::chrono::floor<std::chrono::days>(now);
  return static_cast<long>((today - *day).count());
}

std::optional<std::string> stale_database_note(std::string_view revision, std::string_view date,
                                               std::chrono::system_clock::time_point now) {
  const auto age = age_in_days(date, now);
  if (!age || *age <= db_stale_after_days) return std::nullopt;
  return "the compatibility database (revision " + std::string(revision) + ") is dated " +
         std::string(date) + ", " + std::to_string(*age) +
         " days ago: newer CUDA, cuDNN and framework releases may be missing (run: cudaenv db "
         "update)";
}

std::string utc_timestamp(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

}  // namespace cudaenv::manifest
