// Receipts read back from the store: cudaenv's own file, so a damaged one is a usage error
// (exit 2) naming the file and the field, never an exception.

#include <doctest/doctest.h>

#include "install/store.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::install;
using cudaenv::test::TempDir;
using cudaenv::test::write_file;

namespace {

void check_receipt_error(const std::string& text, const std::string& expected) {
  CAPTURE(text);
  auto receipt = parse_receipt(text, "/s/cudaenv-receipt.json");
  REQUIRE_FALSE(receipt.ok());
  CHECK(receipt.error().kind == ErrorKind::usage);
  CHECK_MESSAGE(receipt.error().message == expected, receipt.error().message);
}

}  // namespace

TEST_CASE("a receipt written by write_receipt reads back") {
  TempDir dir;
  Receipt written{"cuda",
                  "12.4.1",
                  "linux-x86_64",
                  "",
                  "http://m",
                  "2026-01-01T00:00:00Z",
                  {{"cuda_nvcc", "12.4.131", std::string(64, 'a'), "http://m/x.tar.xz", 42}}};
  REQUIRE(write_receipt(dir.path(), written).ok());
  auto read = read_receipt(dir.path());
  REQUIRE(read.ok());
  CHECK(read->version == "12.4.1");
  REQUIRE(read->components.size() == 1);
  CHECK(read->components[0].name == "cuda_nvcc");
  CHECK(read->components[0].size == 42);
  CHECK(read_receipt(dir.path() / "none").error().kind == ErrorKind::not_found);
}

TEST_CASE("a wrongly typed or unreadable receipt names the file and the field") {
  check_receipt_error(R"({"product": 5})", "/s/cudaenv-receipt.json: product must be a string");
  check_receipt_error(R"({"installed_at": null})",
                      "/s/cudaenv-receipt.json: installed_at must be a string");
  check_receipt_error(R"({"components": {}})",
                      "/s/cudaenv-receipt.json: components must be an array");
  check_receipt_error(R"({"components": [{"name": "a"}, 7]})",
                      "/s/cudaenv-receipt.json: components[1]: must be an object");
  check_receipt_error(R"({"components": [{"size": "12"}]})",
                      "/s/cudaenv-receipt.json: components[0]: size must be a whole number");
  check_receipt_error(R"({"components": [{"size": -1}]})",
                      "/s/cudaenv-receipt.json: components[0]: size must be a whole number");
  check_receipt_error(R"({"components": [{"url": ["x"]}]})",
                      "/s/cudaenv-receipt.json: components[0]: url must be a string");
  check_receipt_error("{\"product\": ", "/s/cudaenv-receipt.json: is not a JSON object");
  check_receipt_error("[]", "/s/cudaenv-receipt.json: is not a JSON object");
}

TEST_CASE("listing the store keeps the problem of an unreadable receipt") {
  TempDir dir;
  write_file(dir.path() / "toolkits" / "12.4.1" / receipt_file_name, R"({"version": 12})");
  write_file(dir.path() / "toolkits" / "12.1.1" / "bin" / "nvcc", "");
  const Store store{dir.path()};
  const auto listed = installed_toolkits(store);
  REQUIRE(listed.size() == 2);
  CHECK_FALSE(listed[0].receipt.has_value());
  REQUIRE(listed[0].receipt_problem.has_value());
  CHECK_FALSE(listed[1].receipt_problem.has_value());  // no receipt at all is not a problem
  const auto status = receipts_readable(listed);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message.find("12.4.1/cudaenv-receipt.json: version must be a string") !=
        std::string::npos);
  CHECK(receipts_readable(installed_toolkits(store, Receipts::skip)).ok());
}

TEST_CASE("a receipt larger than any cudaenv writes is refused") {
  TempDir dir;
  write_file(dir.path() / receipt_file_name, "{\"note\": \"" + std::string(2 << 20, 'x') + "\"}");
  auto receipt = read_receipt(dir.path());
  REQUIRE_FALSE(receipt.ok());
  CHECK(receipt.error().kind == ErrorKind::usage);
  CHECK(receipt.error().message.rfind((dir.path() / receipt_file_name).string() + ": ", 0) == 0);
}
