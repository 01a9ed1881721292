// The published database's index, revision order and age (manifest/db_index.*).

#include <doctest/doctest.h>

#include "manifest/db_index.hpp"

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

std::string index_with(const std::string& files, const std::string& revision = "2026-11-29.2") {
  return R"({"format": 1, "revision": ")" + revision + R"(", "date": "2026-11-29", "files": )" +
         files + "}";
}

const std::string good_file =
    R"({"name": "cuda.toml", "size": 12, "sha256": ")" + std::string(64, 'a') + R"("})";

}  // namespace

TEST_CASE("revisions are ordered by their numbers, not as strings") {
  CHECK(compare_revisions("2026-11-29", "2026-11-29.2") < 0);
  CHECK(compare_revisions("2026-11-29.10", "2026-11-29.9") > 0);
  CHECK(compare_revisions("2026-12-01", "2026-11-29.10") > 0);
  CHECK(compare_revisions("2026-11-29", "2026-11-29") == 0);
  CHECK(compare_revisions("", "2020-01-01") < 0);
}

TEST_CASE("an index reads back as written") {
  auto parsed = parse_db_index(index_with("[" + good_file + "]"), "index.json");
  REQUIRE(parsed.ok());
  CHECK(parsed->revision == "2026-11-29.2");
  CHECK(parsed->files.at(0).size == 12);
  auto again = parse_db_index(db_index_json(*parsed), "again");
  REQUIRE(again.ok());
  CHECK(again->files.at(0).sha256 == std::string(64, 'a'));
}

TEST_CASE("a malformed index is an integrity error naming the field") {
  const std::string sha = std::string(64, 'a');
  const std::pair<std::string, std::string> bad[] = {
      {"not json", "not valid JSON"},
      {index_with("[]"), "files must list"},
      {index_with(R"([{"name": "../x.toml", "size": 1, "sha256": ")" + sha + R"("}])"),
       "files[0].name is malformed"},
      {index_with(R"([{"name": "a.toml", "size": 1, "sha256": "ABC"}])"),
       "files[0].sha256 is malformed"},
      {index_with(R"([{"name": "a.toml", "size": -1, "sha256": ")" + sha + R"("}])"),
       "files[0].size"},
      {index_with("[" + good_file + "," + good_file + "]"), "lists cuda.toml twice"},
      {index_with("[" + good_file + "]", "../../etc"),
       R"(index.json: revision: "../../etc" is not a database revision)"},
      {index_with("[" + good_file + "]", "2026-11-29.99999"), "is not a database revision"},
      {index_with("[" + good_file + "]", "99999999"), "is not a database revision"},
      {R"({"format": 1, "revision": "2026-02-28", "date": "2026-02-30", "files": [)" + good_file +
           "]}",
       R"(index.json: date: "2026-02-30" is not a date)"},
      {R"({"format": 1, "revision": "2026-11-28", "date": "2026-11-29", "files": [)" + good_file +
           "]}",
       "date 2026-11-29 is later than the day its revision 2026-11-28 names"},
  };
  for (const auto& [text, needle] : bad) {
    CAPTURE(text);
    auto parsed = parse_db_index(text, "index.json");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().kind == ErrorKind::integrity);
    CHECK(parsed.error().message.find(needle) != std::string::npos);
  }
  auto newer_format = parse_db_index(R"({"format": 2})", "index.json");
  REQUIRE_FALSE(newer_format.ok());
  CHECK(newer_format.error().message.find("format 2") != std::string::npos);
}

TEST_CASE("an index dated more than a day ahead is refused, naming the field") {
  const auto now =
      std::chrono::sys_days(std::chrono::year(2026) / 11 / 30) + std::chrono::hours(23);
  const auto index = [](std::string revision, std::string date) {
    return DbIndex{std::move(revision), std::move(date), {}};
  };
  CHECK(check_not_in_future(index("2026-12-01.3", "2026-12-01"), "u", now).ok());  // a time zone
  CHECK(check_not_in_future(index("2026-11-30", "2026-01-01"), "u", now).ok());
  const auto date = check_not_in_future(index("2026-12-02", "2026-12-02"), "u", now);
  REQUIRE_FALSE(date.ok());
  CHECK(date.error().kind == ErrorKind::integrity);
  CHECK(date.error().message == "u: date 2026-12-02 is more than a day in the future");
  const auto revision = check_not_in_future(index("2099-01-01.1", "2026-11-29"), "u", now);
  REQUIRE_FALSE(revision.ok());
  CHECK(revision.error().message.find("u: revision 2099-01-01.1 is dated") == 0);
}

TEST_CASE("a database's age counts whole days from its date") {
  const auto now =
      std::chrono::sys_days(std::chrono::year(2026) / 11 / 30) + std::chrono::hours(13);
  CHECK(age_in_days("2026-11-29", now) == 1);
  CHECK(age_in_days("2026-08-31", now) == 91);
  CHECK_FALSE(age_in_days("yesterday", now).has_value());
  CHECK(date_of_revision("2026-08-31.3") == "2026-08-31");
  CHECK(date_of_revision("17").empty());
  CHECK_FALSE(stale_database_note("r", "2026-09-01", now).has_value());  // 90 days: not yet
  const auto note = stale_database_note("r", "2026-08-31", now);
  REQUIRE(note.has_value());
  CHECK(note->find("91 days ago") != std::string::npos);
}
