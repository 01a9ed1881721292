// The compatibility database checked as data: well-formed, ordered, self-consistent, sourced.

#include <algorithm>
#include <set>
#include <utility>

#include <doctest/doctest.h>

#include "manifest/load.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

const Database& db() {
  static const Database database = [] {
    auto loaded = load_database(embedded_manifests());
    REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
    return std::move(loaded).value();
  }();
  return database;
}

void check_sourced(const Provenance& p, const std::string& what) {
  CAPTURE(what);
  CHECK_FALSE(p.sources.empty());
  for (const auto& key : p.sources) {
    CAPTURE(key);
    CHECK(db().has_source(key));
  }
  CHECK((p.confidence == "high" || p.confidence == "medium" || p.confidence == "inferred" ||
         p.confidence == "unconfirmed"));
  // A fact no primary source states must say what it rests on: the resolver prints it.
  if (p.unconfirmed()) CHECK_FALSE(p.basis.empty());
}

}  // namespace

TEST_CASE("the compiled-in database loads and covers CUDA 11.0 through 13.x") {
  CHECK(db().cuda_releases.size() >= 50);
  CHECK(db().cuda_releases.front().version.major() == 11);
  CHECK(db().cuda_releases.back().version.major() == 13);
  CHECK(db().pytorch.front().version == *Version::parse("1.13"));
  CHECK(db().tensorflow.front().version == *Version::parse("2.10"));
  CHECK(db().driver_branches.front().branch <= 470);
  CHECK(db().driver_branches.back().branch >= 580);
  CHECK_FALSE(db().revision.empty());
}

TEST_CASE("every record names a known source") {
  for (const auto& r : db().cuda_releases) check_sourced(r.provenance, "CUDA " + r.version.str());
  for (const auto& f : db().cuda_families)
    check_sourced(f.provenance, "family " + std::to_string(f.major));
  for (const auto& a : db().gpu_archs) check_sourced(a.provenance, a.sm);
  for (const auto& h : db().host_compilers)
    check_sourced(h.provenance, "host compiler " + h.cuda.str());
  for (const auto& c : db().cudnn_releases)
    check_sourced(c.provenance, "cuDNN " + c.full_version.str());
  for (const auto& s : db().cudnn_support)
    check_sourced(s.provenance, "cuDNN support " + s.cudnn.str());
  for (const auto& p : db().pytorch) check_sourced(p.provenance, "torch " + p.version.str());
  for (const auto& t : db().tensorflow)
    check_sourced(t.provenance, "tensorflow " + t.version.str());
  for (const auto& j : db().jax) check_sourced(j.provenance, "jax " + j.pip_extra);
  for (const auto& b : db().driver_branches) check_sourced(b.provenance, b.package);
}

TEST_CASE("releases are unique and every toolkit knows its driver and family") {
  std::set<std::string> seen;
  for (const auto& r : db().cuda_releases) {
    CAPTURE(r.version.str());
    CHECK(r.version.size() == 3);
    CHECK(seen.insert(r.version.str()).second);
    CHECK(db().family(r.version.major()) != nullptr);
    // Every release, including each one only the generated redist block lists, has its
    // hand-sourced facts: a driver floor (or a recorded reason why it is unknown), host compiler
    // limits and a driver branch.
    CHECK((r.min_driver.has_value() ||
           (r.provenance.confidence == "unconfirmed" && !r.provenance.basis.empty() &&
            r.provenance.basis != "listed in NVIDIA's redist index only")));
    CHECK(db().host_compiler(r.version) != nullptr);
    // A release whose driver floor is unknown may also precede any known driver branch (13.5).
    CHECK((db().branch_for(r.version) != nullptr || r.unchecked()));
  }
}

TEST_CASE("the generated redist block fills in component versions and adds unsourced releases") {
  const auto* release_1302 = [] {
    for (const auto& r : db().cuda_releases)
      if (r.version == *Version::parse("13.0.2")) return &r;
    return static_cast<const CudaRelease*>(nullptr);
  }();
  REQUIRE(release_1302 != nullptr);
  REQUIRE(release_1302->nvcc.has_value());
  CHECK(release_1302->nvcc->str() == "13.0.88");

  auto files = embedded_manifests();
  for (auto& file : files) {
    if (file.name == "cuda.toml")
      file.text += "\n[[redist]]\nversion = \"13.9.0\"\nnvcc = \"13.9.12\"\n";
    if (file.name == "cudnn.toml")
      file.text +=
          "\n[[redist]]\nversion = \"9.99.0\"\nfull_version = \"9.99.0.1\"\n"
          "cuda_variants = [\"13\"]\n";
  }
  auto loaded = load_database(files);
  REQUIRE(loaded.ok());
  const auto& added = loaded->cuda_releases.back();
  CHECK(added.version.str() == "13.9.0");
  CHECK(added.unchecked());
  CHECK(added.provenance.confidence == "unconfirmed");
  REQUIRE(loaded->cudnn(*Version::parse("9.99.0")) != nullptr);
  CHECK(loaded->cudnn(*Version::parse("9.99.0"))->cuda_majors == std::vector<int>{13});
}

TEST_CASE("releases, architectures and torch builds NVIDIA and PyTorch publish on PyPI are known") {
  const auto release = [](const char* version) -> const CudaRelease* {
    for (const auto& r : db().cuda_releases)
      if (r.version == *Version::parse(version)) return &r;
    return nullptr;
  };
  // PYPI_CTK: cuda-toolkit <label> pins nvidia-cuda-nvcc <version>.
  const std::pair<const char*, const char*> pinned_nvcc[] = {
      {"13.2.0", "13.2.51"}, {"13.2.1", "13.2.78"}, {"13.3.0", "13.3.33"},
      {"13.3.1", "13.3.73"}, {"13.4.3", "13.4.92"}, {"13.5.0", "13.5.37"}};
  for (const auto& pin : pinned_nvcc) {
    const char* label = pin.first;
    const char* nvcc = pin.second;
    CAPTURE(label);
    const auto* r = release(label);
    REQUIRE(r != nullptr);
    REQUIRE(r->nvcc.has_value());
    CHECK(r->nvcc->str() == nvcc);
  }
  CHECK(release("13.5.0")->unchecked());  // no source read states its driver floor
  // PYPI_NVCC: nvcc lists sm_88 from 13.0 and sm_107 from 13.4.
  REQUIRE(db().arch(*Version::parse("8.8")) != nullptr);
  CHECK(db().arch(*Version::parse("8.8"))->first_cuda == *Version::parse("13.0"));
  REQUIRE(db().arch(*Version::parse("10.7")) != nullptr);
  CHECK(db().arch(*Version::parse("10.7"))->first_cuda == *Version::parse("13.4"));
  // PYPI_CRT: host_config.h of 13.5 accepts gcc 16 and clang 22.
  REQUIRE(db().host_compiler(*Version::parse("13.5.0")) != nullptr);
  CHECK(db().host_compiler(*Version::parse("13.5.0"))->gcc_max == 16);
  // PYPI_TORCH: the requirements of torch 2.14.0 and 2.15.0 on PyPI.
  const std::pair<const char*, const char*> pypi_defaults[] = {{"2.14", "cu130"},
                                                               {"2.15", "cu132"}};
  for (const auto& expected : pypi_defaults) {
    const char* series = expected.first;
    const char* tag = expected.second;
    CAPTURE(series);
    const auto p = std::find_if(db().pytorch.begin(), db().pytorch.end(), [&](const auto& t) {
      return t.version == *Version::parse(series);
    });
    REQUIRE(p != db().pytorch.end());
    CHECK(p->pypi_default == tag);
    CHECK(p->provenance.confidence == "high");
  }
}

TEST_CASE("driver minimums never decrease from one release to the next") {
  std::optional<Version> previous;
  for (const auto& r : db().cuda_releases) {
    if (!r.min_driver) continue;
    CAPTURE(r.version.str());
    if (previous) CHECK(*r.min_driver >= *previous);
    previous = r.min_driver;
  }
}

TEST_CASE("no inverted ranges") {
  for (const auto& a : db().gpu_archs) {
    CAPTURE(a.sm);
    if (a.last_cuda) CHECK(a.first_cuda <= *a.last_cuda);
    CHECK(a.sm == "sm_" + std::to_string(a.compute_capability.major()) +
                      std::to_string(a.compute_capability.minor()));
  }
  for (const auto& s : db().cudnn_support) {
    CAPTURE(s.cudnn.str());
    CHECK(s.cuda_min <= s.cuda_max);
    CHECK(s.cuda_min.major() == s.cuda_major);
  }
  for (size_t i = 1; i < db().driver_branches.size(); ++i) {
    CHECK(db().driver_branches[i].branch > db().driver_branches[i - 1].branch);
    CHECK(db().driver_branches[i].max_cuda > db().driver_branches[i - 1].max_cuda);
  }
}

TEST_CASE("every framework reference resolves to a known toolkit and cuDNN") {
  for (const auto& p : db().pytorch) {
    CAPTURE(p.version.str());
    bool default_found = false;
    for (const auto& v : p.variants) {
      CAPTURE(v.tag);
      default_found = default_found || v.tag == p.pypi_default;
      CHECK(v.tag == "cu" + std::to_string(v.cuda.major()) + std::to_string(v.cuda.minor()));
      CHECK(std::any_of(db().cuda_releases.begin(), db().cuda_releases.end(),
                        [&](const auto& r) { return r.version.major_minor() == v.cuda; }));
      CHECK(db().cudnn(v.cudnn) != nullptr);
      if (v.sass) {
        for (const auto& cc : *v.sass) CHECK(db().arch(cc) != nullptr);
      }
    }
    CHECK(default_found);
  }
  for (const auto& t : db().tensorflow) {
    CAPTURE(t.version.str());
    CHECK(std::any_of(db().cuda_releases.begin(), db().cuda_releases.end(),
                      [&](const auto& r) { return r.version.major_minor() == t.cuda; }));
    CHECK(std::any_of(db().cudnn_releases.begin(), db().cudnn_releases.end(),
                      [&](const auto& c) { return c.version.has_prefix(t.cudnn); }));
  }
}

TEST_CASE("a newer copy in the data root overrides the compiled-in file") {
  test::TempDir root;
  auto files = embedded_manifests();
  auto cuda =
      std::find_if(files.begin(), files.end(), [](const auto& f) { return f.name == "cuda.toml"; });
  REQUIRE(cuda != files.end());
  std::string newer = cuda->text;
  newer.replace(newer.find("revision = \""), 23, "revision = \"2999-01-01\"");
  newer +=
      "\n[[release]]\nversion = \"13.9.0\"\nmin_driver = \"650.10.01\"\nsources = "
      "[\"RN131\"]\nconfidence = \"high\"\n";
  test::write_file(root.path() / "manifests/cuda.toml", newer);
  auto loaded = load_default_database(root.path());
  REQUIRE(loaded.ok());
  CHECK(loaded->cuda_releases.back().version.str() == "13.9.0");

  // An older copy is ignored.
  std::string older = cuda->text;
  older.replace(older.find("revision = \""), 23, "revision = \"2000-01-01\"");
  test::write_file(root.path() / "manifests/cuda.toml",
                   older + "\n[[release]]\nversion = \"13.9.0\"\n");
  CHECK(load_default_database(root.path())->cuda_releases.back().version.str() != "13.9.0");
}

TEST_CASE("a broken manifest is an error naming the file, the line and the key") {
  test::TempDir root;
  test::write_file(root.path() / "manifests/drivers.toml",
                   "[meta]\nrevision = \"2999-01-01\"\n[[branch]]\nbranch = 999\npackage = "
                   "\"x\"\nmax_cuda = \"thirteen\"\n");
  auto loaded = load_default_database(root.path());
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message.find("drivers.toml:6") != std::string::npos);
  CHECK(loaded.error().message.find("max_cuda") != std::string::npos);

  test::write_file(root.path() / "manifests/drivers.toml",
                   "[meta]\nrevision = \"2999-01-01\"\n[[branch]]\nbranch = 999\npackage = "
                   "\"x\"\nmax_cuda = \"\"\n");
  auto empty = load_default_database(root.path());
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message.find("drivers.toml:6: max_cuda is empty") != std::string::npos);

  test::write_file(root.path() / "manifests/drivers.toml",
                   "[meta]\nrevision = \"2999-01-01\"\n[[branch]]\nbranch = 999\npackage = "
                   "\"x\"\nmax_cuda = \"13.0\"\n"
                   "sources = \"RN131\"\n");
  auto not_array = load_default_database(root.path());
  REQUIRE_FALSE(not_array.ok());
  CHECK(not_array.error().message.find("sources must be an array") != std::string::npos);

  test::write_file(root.path() / "manifests/drivers.toml", "[meta\nrevision = ");
  auto unparsable = load_default_database(root.path());
  REQUIRE_FALSE(unparsable.ok());
  CHECK(unparsable.error().message.find("drivers.toml:1") != std::string::npos);
}
