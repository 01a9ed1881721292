// NVIDIA's redistrib manifests read by manifest::parse_redist. The fixtures in
// tests/fixtures/redist/ are NVIDIA's own files, byte for byte (redistrib_<version>.json from
// developer.download.nvidia.com/compute/{cuda,cudnn}/redist/): 12.4.1 (with release_label),
// 11.8.0 (without), cuDNN 9.1.0 (one archive per CUDA variant) and cuDNN 8.9.7.29 (one archive
// per platform).

#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "manifest/redist.hpp"

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

std::string fixture(const std::string& name) {
  const auto path = std::string(CUDAENV_FIXTURES_DIR) + "/redist/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

RedistManifest parse_fixture(const std::string& name) {
  auto parsed = parse_redist(fixture(name), name);
  REQUIRE_MESSAGE(parsed.ok(), (parsed.ok() ? "" : parsed.error().message));
  return std::move(parsed).value();
}

// A one-component manifest around one file entry.
std::string manifest_with(const std::string& relative_path, const std::string& sha256) {
  return R"({"release_date": "2025-01-01", "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.4.131",
            "linux-x86_64": {"relative_path": ")" +
         relative_path + R"(", "sha256": ")" + sha256 + R"(", "size": "12"}}})";
}

const std::string good_sha = std::string(64, 'a');

}  // namespace

TEST_CASE("CUDA 12.4.1: every component with its platforms, sizes and hashes") {
  const auto m = parse_fixture("cuda-redistrib_12.4.1.json");
  CHECK(m.release_label == "12.4.1");
  CHECK(m.release_date == "2024-04-03");
  CHECK(m.components.size() == 41);
  const auto* nvcc = m.component("cuda_nvcc");
  REQUIRE(nvcc != nullptr);
  CHECK(nvcc->name == "CUDA NVCC");
  CHECK(nvcc->license == "CUDA Toolkit");
  REQUIRE(nvcc->version.has_value());
  CHECK(nvcc->version->str() == "12.4.131");
  CHECK(nvcc->files.size() == 5);
  const auto* file = redist_file(*nvcc, "linux-x86_64");
  REQUIRE(file != nullptr);
  CHECK(file->relative_path ==
        "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz");
  CHECK(file->sha256 == "7ffba1ada0e4b8c17e451ac7a60d386aa2642ecd08d71202a0b100c98bd74681");
  CHECK(file->size == 51184484);
  CHECK(redist_file(*nvcc, "linux-sbsa") != nullptr);
  CHECK(redist_file(*nvcc, "linux-x86_64", "cuda12") == nullptr);
  // Driver-side and Windows-only packages are in the manifest too; choosing is not parsing.
  const auto* vs = m.component("visual_studio_integration");
  REQUIRE(vs != nullptr);
  CHECK(redist_file(*vs, "linux-x86_64") == nullptr);
  CHECK(redist_file(*vs, "windows-x86_64") != nullptr);
  CHECK(m.component("nvidia_driver") != nullptr);
  CHECK(m.component("no_such_component") == nullptr);
}

TEST_CASE("CUDA 11.8.0: a manifest without release_label") {
  const auto m = parse_fixture("cuda-redistrib_11.8.0.json");
  CHECK(m.release_label.empty());
  CHECK(m.release_date == "2022-10-03");
  CHECK(m.components.size() == 39);
  const auto* cudart = m.component("cuda_cudart");
  REQUIRE(cudart != nullptr);
  CHECK(cudart->version->str() == "11.8.89");
  const auto* file = redist_file(*cudart, "linux-x86_64");
  REQUIRE(file != nullptr);
  CHECK(file->sha256 == "56129e0c42df03ecb50a7bb23fc3285fa39af1a818f8826b183cf793529098bb");
  CHECK(file->size == 913876);
}

TEST_CASE("cuDNN 9.1.0: one archive per CUDA variant, keyed platform/variant") {
  const auto m = parse_fixture("cudnn-redistrib_9.1.0.json");
  CHECK(m.release_label == "9.1.0");
  REQUIRE(m.components.size() == 2);
  const auto* cudnn = m.component("cudnn");
  REQUIRE(cudnn != nullptr);
  CHECK(cudnn->version->str() == "9.1.0.70");
  CHECK(cudnn->files.count("linux-x86_64/cuda11") == 1);
  CHECK(cudnn->files.count("linux-x86_64/cuda12") == 1);
  CHECK(cudnn->files.count("linux-aarch64/cuda12") == 1);
  CHECK(cudnn->files.count("linux-aarch64/cuda11") == 0);
  CHECK(cudnn->files.count("linux-x86_64") == 0);  // no plain entry: only variants
  const auto* file = redist_file(*cudnn, "linux-x86_64", "cuda12");
  REQUIRE(file != nullptr);
  CHECK(file->relative_path ==
        "cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz");
  CHECK(file->sha256 == "fdc6d6f28217b82c400adfdae8f0364fa36c5fb6cb683933e8900a748e70b263");
  CHECK(file->size == 862715244);
  CHECK(redist_file(*cudnn, "linux-x86_64") == nullptr);
  // The samples ship as a platform-independent "source" archive.
  const auto* samples = m.component("cudnn_samples");
  REQUIRE(samples != nullptr);
  CHECK(redist_file(*samples, "source") != nullptr);
}

TEST_CASE("cuDNN 8.9.7.29: one archive per platform, a four-part version") {
  const auto m = parse_fixture("cudnn-redistrib_8.9.7.29.json");
  CHECK(m.release_label == "8.9.7.29");
  const auto* cudnn = m.component("cudnn");
  REQUIRE(cudnn != nullptr);
  CHECK(cudnn->version->str() == "8.9.7.29");
  const auto* file = redist_file(*cudnn, "linux-x86_64");
  REQUIRE(file != nullptr);
  CHECK(file->relative_path ==
        "cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz");
  CHECK(file->sha256 == "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb");
  CHECK(file->size == 864984964);
  CHECK(redist_file(*cudnn, "linux-x86_64", "cuda12") == nullptr);
}

TEST_CASE("a well-formed hand-written entry parses, sizes may be numbers, hashes are lower-cased") {
  auto m =
      parse_redist(manifest_with("cuda_nvcc/linux-x86_64/x.tar.xz", std::string(64, 'A')), "test");
  REQUIRE(m.ok());
  const auto* file = redist_file(*m->component("cuda_nvcc"), "linux-x86_64");
  REQUIRE(file != nullptr);
  CHECK(file->sha256 == std::string(64, 'a'));
  CHECK(file->size == 12);
  auto numeric =
      parse_redist(R"({"c": {"linux-x86_64": {"relative_path": "c/x.tar.xz", "sha256": ")" +
                       good_sha + R"(", "size": 4096}}})",
                   "test");
  REQUIRE(numeric.ok());
  CHECK(redist_file(*numeric->component("c"), "linux-x86_64")->size == 4096);
}

TEST_CASE("a relative_path that could leave the mirror's directory is an integrity error") {
  for (const std::string path : {"../../x", "cuda_nvcc/../../x", "/etc/passwd",
                                 "cuda_nvcc//x.tar.xz", "./x.tar.xz", R"(cuda_nvcc\\..\\x)", ""}) {
    CAPTURE(path);
    auto m = parse_redist(manifest_with(path, good_sha),
                          "https://mirror/cuda/redist/redistrib_12.4.1.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().kind == ErrorKind::integrity);
    CHECK(m.error().message.find("https://mirror/cuda/redist/redistrib_12.4.1.json") !=
          std::string::npos);
    CHECK(m.error().message.find("cuda_nvcc") != std::string::npos);
    CHECK(m.error().message.find("unsafe relative_path") != std::string::npos);
  }
}

TEST_CASE("a malformed sha256 is an integrity error naming it") {
  for (const std::string& sha : {std::string(63, 'a'), std::string(65, 'a'), std::string(64, 'g'),
                                 std::string("not-a-hash")}) {
    CAPTURE(sha);
    auto m = parse_redist(manifest_with("cuda_nvcc/x.tar.xz", sha), "origin.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().kind == ErrorKind::integrity);
    CHECK(m.error().message.find("malformed sha256") != std::string::npos);
    CHECK(m.error().message.find("origin.json: cuda_nvcc.linux-x86_64") != std::string::npos);
  }
}

TEST_CASE("text that is not a JSON object is a plain failure naming the URL") {
  for (const std::string text : {"", "{", "not json", "[1, 2]", "\"a string\""}) {
    CAPTURE(text);
    auto m = parse_redist(text, "https://mirror/cuda/redist/redistrib_1.0.0.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().kind == ErrorKind::failure);
    CHECK(
        m.error().message ==
        "https://mirror/cuda/redist/redistrib_1.0.0.json: not a redistrib manifest (invalid JSON)");
  }
}

namespace {

// A one-file manifest whose file entry has the given JSON members.
std::string manifest_with_entry(const std::string& members) {
  return R"({"c": {"version": "1.0", "linux-x86_64": {)" + members + "}}}";
}

const std::string path_and_sha = R"("relative_path": "c/x.tar.xz", "sha256": ")" + good_sha + "\"";

void check_mirror_error(const std::string& text, const std::string& expected) {
  CAPTURE(text);
  auto m = parse_redist(text, "m.json");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().kind == ErrorKind::integrity);
  CHECK_MESSAGE(m.error().message == expected, m.error().message);
}

}  // namespace

TEST_CASE("a missing or wrongly typed field is an integrity error naming the component and field") {
  check_mirror_error(manifest_with_entry(R"("relative_path": "c/x.tar.xz", "size": "1")"),
                     "m.json: c.linux-x86_64: sha256 is missing");
  check_mirror_error(manifest_with_entry(R"("relative_path": "c/x.tar.xz", "sha256": 5)"),
                     "m.json: c.linux-x86_64: sha256 must be a string");
  check_mirror_error(manifest_with_entry(R"("relative_path": ["c"], "sha256": "x")"),
                     "m.json: c.linux-x86_64: relative_path must be a string");
  check_mirror_error(manifest_with_entry(path_and_sha), "m.json: c.linux-x86_64: size is missing");
  check_mirror_error(manifest_with_entry(path_and_sha + R"(, "size": "big")"),
                     "m.json: c.linux-x86_64: size: \"big\" is not a size in bytes (a whole number "
                     "from 0 to 68719476736, 64 GiB)");
  for (const std::string size : {"-1", "1.5", "true", "null", "{}", "\"-1\"", "\"\"", "1e3",
                                 "\"68719476737\"", "68719476737", "\"012\""}) {
    CAPTURE(size);
    auto m = parse_redist(manifest_with_entry(path_and_sha + R"(, "size": )" + size), "m.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().kind == ErrorKind::integrity);
    CHECK(m.error().message.find("m.json: c.linux-x86_64: size") == 0);
  }
  check_mirror_error(R"({"c": {"name": 42}})", "m.json: c: name must be a string");
  check_mirror_error(R"({"c": {"license": ["x"]}})", "m.json: c: license must be a string");
  check_mirror_error(R"({"c": {"version": 12.4}})", "m.json: c: version must be a string");
  check_mirror_error(R"({"release_label": 12, "c": {}})", "m.json: release_label must be a string");
  check_mirror_error(R"({"release_date": null})", "m.json: release_date must be a string");
}

TEST_CASE("component, platform and variant names and versions are plain short names") {
  const auto file =
      R"({"relative_path": "c/x.tar.xz", "sha256": ")" + good_sha + R"(", "size": "1"})";
  check_mirror_error(R"({"../../etc": {"linux-x86_64": )" + file + "}}",
                     "m.json: unsafe component name \"../../etc\"");
  check_mirror_error(R"({"a/b": {}})", "m.json: unsafe component name \"a/b\"");
  check_mirror_error(R"({"..": {}})", "m.json: unsafe component name \"..\"");
  check_mirror_error(R"({"": {}})", "m.json: unsafe component name \"\"");
  check_mirror_error("{\"" + std::string(200, 'a') + "\": {}}",
                     "m.json: unsafe component name \"" + std::string(80, 'a') + "...\"");
  check_mirror_error(R"({"c": {"version": "12.4\n131"}})",
                     "m.json: c: version \"12.4\\x0a131\" is not a version");
  check_mirror_error(R"({"c": {"version": "../1"}})",
                     "m.json: c: version \"../1\" is not a version");
  check_mirror_error(R"({"c": {"version": ""}})", "m.json: c: version \"\" is not a version");
  check_mirror_error(R"({"c": {"linux/x86": )" + file + "}}",
                     "m.json: c: unsafe platform name \"linux/x86\"");
  check_mirror_error(R"({"c": {"linux-x86_64": {"../cuda12": )" + file + "}}}",
                     "m.json: c.linux-x86_64: unsafe variant name \"../cuda12\"");
  check_mirror_error(
      manifest_with_entry(R"("relative_path": "c/x\u001b[2J.tar.xz", "sha256": "x")"),
      "m.json: c.linux-x86_64: unsafe relative_path \"c/x\\x1b[2J.tar.xz\"");
}

TEST_CASE("real versions beyond the comparable range are kept as text, not refused") {
  // cuda_compat's version in NVIDIA's 12.4.1 manifest is 12.4.35753180.
  auto m = parse_redist(R"({"cuda_compat": {"version": "12.4.35753180"}})", "m.json");
  REQUIRE(m.ok());
  CHECK_FALSE(m->component("cuda_compat")->version.has_value());
}
