// Install planning without the command line: choosing a release on a mirror, selecting its
// components, the cuDNN build for a toolkit, what `mirror create` copies, and the uninstall lock.
// The mirrors are file:// directories holding NVIDIA's own redistrib manifests from
// tests/fixtures/redist/ (CUDA 11.8.0, 12.4.1 and 13.0.2; cuDNN 8.9.7.29 with one archive per
// platform, 9.1.0 built for CUDA 11 and 12, 9.14.0 for CUDA 12 and 13), read through the same
// libcurl path a remote mirror takes.

#include <algorithm>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "install/mirror_create.hpp"
#include "install/plan.hpp"
#include "install/uninstall.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::install;

namespace {

std::string fixture_text(const std::string& name) {
  std::ifstream in(fs::path(CUDAENV_FIXTURES_DIR) / "redist" / name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A mirror directory in NVIDIA's layout and a data root beside it.
class Mirror {
 public:
  Mirror() = default;
  Mirror(const std::string& product, const std::vector<std::string>& versions) {
    for (const auto& v : versions) publish(product, v);
  }
  // Publishes fixture <product>-redistrib_<fixture_version>.json as release `as_version`.
  void publish(const std::string& product, const std::string& fixture_version,
               std::string as_version = {}) {
    if (as_version.empty()) as_version = fixture_version;
    test::write_file(
        dir_.path() / "mirror" / product / "redist" / ("redistrib_" + as_version + ".json"),
        fixture_text(product + "-redistrib_" + fixture_version + ".json"));
  }
  ReleaseSource source() const {
    return {"file://" + (dir_.path() / "mirror").string(), Store{dir_.path() / "root"}, {}};
  }
  const fs::path& root() const { return dir_.path(); }

 private:
  test::TempDir dir_;
};

const std::vector<std::string> cuda_releases = {"11.8.0", "12.4.1", "13.0.2"};
const std::vector<std::string> cudnn_releases = {"8.9.7.29", "9.1.0", "9.14.0"};

VersionSpec spec(const char* text) { return VersionSpec::parse(text).value(); }

std::vector<std::string> names(const std::vector<SelectedArchive>& archives) {
  std::vector<std::string> out;
  for (const auto& a : archives) out.push_back(a.component);
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("choose_release: the newest release on the mirror that matches the spec") {
  const Mirror mirror("cuda", cuda_releases);
  const auto source = mirror.source();
  CHECK(choose_release(source, "cuda", spec("12")).value().str() == "12.4.1");
  CHECK(choose_release(source, "cuda", spec("12.4")).value().str() == "12.4.1");
  CHECK(choose_release(source, "cuda", spec("11")).value().str() == "11.8.0");
  CHECK(choose_release(source, "cuda", spec("latest")).value().str() == "13.0.2");
  CHECK(choose_release(source, "cuda", spec("13.0.2")).value().str() == "13.0.2");

  const auto missing = choose_release(source, "cuda", spec("12.6"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(contains(missing.error().message, "no cuda release matching \"12.6\""));
  CHECK(missing.error().hint ==
        "newest offered: 13.0.2, 12.4.1, 11.8.0 ('cudaenv list-remote' "
        "lists all)");
}

TEST_CASE("choose_release: without a listing only an exact release can be named") {
  Mirror empty;  // nothing published: the redist directory does not exist
  const auto source = empty.source();
  CHECK(choose_release(source, "cuda", spec("12.4.1")).value().str() == "12.4.1");
  const auto vague = choose_release(source, "cuda", spec("12.4"));
  REQUIRE_FALSE(vague.ok());
  CHECK(vague.error().kind == ErrorKind::network);
}

TEST_CASE("plan_toolkit: minimal is compiler, runtime and headers, plus what CUDA 13 split off") {
  const Mirror mirror("cuda", cuda_releases);
  auto old = plan_toolkit({"12.4", "minimal"}, mirror.source(), "linux-x86_64");
  REQUIRE_MESSAGE(old.ok(), (old.ok() ? "" : old.error().message));
  CHECK(names(old->install.archives) ==
        std::vector<std::string>{"cuda_nvcc", "cuda_cudart", "cuda_cccl"});
  CHECK(old->install.target == mirror.root() / "root" / "toolkits" / "12.4.1");
  CHECK(old->install.product == "cuda");
  CHECK(old->install.variant.empty());
  CHECK(old->install.archives[0].version == "12.4.131");
  CHECK(old->install.archives[0].file.relative_path ==
        "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz");
  // The manifest is cached in the store as the mirror served it.
  CHECK(fs::exists(mirror.root() / "root" / "cache" / "manifests" / "cuda" /
                   "redistrib_12.4.1.json"));

  auto split = plan_toolkit({"13", "minimal"}, mirror.source(), "linux-x86_64");
  REQUIRE(split.ok());
  CHECK(names(split->install.archives) == std::vector<std::string>{"cuda_nvcc", "cuda_cudart",
                                                                   "cuda_cccl", "cuda_crt",
                                                                   "libnvvm", "cuda_culibos"});
}

TEST_CASE("plan_toolkit: full is every toolkit component of the platform, no driver-side ones") {
  const Mirror mirror("cuda", cuda_releases);
  auto full = plan_toolkit({"12.4.1", "full"}, mirror.source(), "linux-x86_64");
  REQUIRE(full.ok());
  const auto selected = names(full->install.archives);
  // 37 components ship linux-x86_64 archives; the driver, fabric manager, IMEX, NSCQ and the
  // GPUDirect Storage kernel side do not belong in a toolkit prefix.
  CHECK(selected.size() == 32);
  for (const auto* wanted : {"cuda_nvcc", "libcublas", "cuda_gdb", "nsight_compute"})
    CHECK_MESSAGE(std::count(selected.begin(), selected.end(), wanted) == 1, wanted);
  for (const auto* driver : {"nvidia_driver", "fabricmanager", "imex", "libnvidia_nscq",
                             "nvidia_fs", "cuda_compat", "nsight_vse"})
    CHECK_MESSAGE(std::count(selected.begin(), selected.end(), driver) == 0, driver);
}

TEST_CASE("plan_toolkit: a list selects exactly its components, an unknown one is a usage error") {
  const Mirror mirror("cuda", cuda_releases);
  auto listed = plan_toolkit({"12.4.1", "cuda_nvcc, libcublas"}, mirror.source(), "linux-sbsa");
  REQUIRE(listed.ok());
  CHECK(names(listed->install.archives) == std::vector<std::string>{"cuda_nvcc", "libcublas"});
  CHECK(contains(listed->install.archives[0].file.relative_path, "linux-sbsa"));

  auto unknown =
      plan_toolkit({"12.4.1", "cuda_nvcc,cuda_nvcc_typo"}, mirror.source(), "linux-x86_64");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().kind == ErrorKind::usage);
  CHECK(unknown.error().message ==
        "--components: \"cuda_nvcc_typo\" is not in this release for linux-x86_64");
  CHECK(contains(unknown.error().hint, "cuda_nvcc,"));
  CHECK_FALSE(contains(unknown.error().hint, "nvidia_driver"));
}

TEST_CASE("plan_toolkit: a malformed spec names SPEC, a release the database lacks is flagged") {
  Mirror mirror("cuda", cuda_releases);
  auto bad = plan_toolkit({"twelve", "full"}, mirror.source(), "linux-x86_64");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::usage);
  CHECK(bad.error().message.rfind("SPEC: ", 0) == 0);

  auto known = plan_toolkit({"13.0.2", "minimal"}, mirror.source(), "linux-x86_64");
  REQUIRE(known.ok());
  CHECK_FALSE(known->unknown_to_database.has_value());
  // A release newer than any the compatibility database records (NVIDIA's 13.0.2 manifest
  // published under a future version number).
  mirror.publish("cuda", "13.0.2", "99.1.0");
  auto future = plan_toolkit({"99", "minimal"}, mirror.source(), "linux-x86_64");
  REQUIRE(future.ok());
  CHECK(future->install.version == "99.1.0");
  REQUIRE(future->unknown_to_database.has_value());
  CHECK(*future->unknown_to_database == test::embedded_database().revision);
}

TEST_CASE("plan_cudnn: the newest matching release with a build for the toolkit's CUDA major") {
  const Mirror mirror("cudnn", cudnn_releases);
  const auto source = mirror.source();
  auto for12 = plan_cudnn("9", 12, source, "linux-x86_64");
  REQUIRE_MESSAGE(for12.ok(), (for12.ok() ? "" : for12.error().message));
  CHECK(for12->version == "9.14.0");
  CHECK(for12->variant == "cuda12");
  CHECK(for12->target == mirror.root() / "root" / "cudnn" / "9.14.0-cuda12");
  CHECK(names(for12->archives) == std::vector<std::string>{"cudnn", "cudnn_jit"});
  for (const auto& archive : for12->archives)
    CHECK_MESSAGE(contains(archive.file.relative_path, "_cuda12-archive"),
                  archive.file.relative_path);

  // 9.14.0 has no CUDA 11 build: the search passes over it to 9.1.0.
  auto for11 = plan_cudnn("9", 11, source, "linux-x86_64");
  REQUIRE(for11.ok());
  CHECK(for11->version == "9.1.0");
  CHECK(for11->variant == "cuda11");

  // On Jetson 9.14.0 ships cudnn for CUDA 13, but no cudnn_jit.
  auto jetson = plan_cudnn("9.14", 13, source, "linux-aarch64");
  REQUIRE(jetson.ok());
  CHECK(names(jetson->archives) == std::vector<std::string>{"cudnn"});

  // cuDNN 8.9.7.29 has one archive per platform, whatever the toolkit.
  auto single = plan_cudnn("8", 12, source, "linux-x86_64");
  REQUIRE(single.ok());
  CHECK(single->version == "8.9.7.29");
  CHECK(single->target == mirror.root() / "root" / "cudnn" / "8.9.7.29-cuda12");
  CHECK(names(single->archives) == std::vector<std::string>{"cudnn", "cudnn_samples"});
}

TEST_CASE("plan_cudnn: no build for the toolkit's major, or a malformed spec, is an error") {
  const Mirror mirror("cudnn", cudnn_releases);
  auto none = plan_cudnn("9.1", 13, mirror.source(), "linux-x86_64");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().kind == ErrorKind::not_found);
  CHECK(contains(none.error().message, "no cuDNN release matching \"9.1\" with a cuda13 build"));

  auto bad = plan_cudnn("nine", 12, mirror.source(), "linux-x86_64");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::usage);
  CHECK(bad.error().message.rfind("--cudnn: ", 0) == 0);
}

TEST_CASE("plan_mirror_release: cuDNN is copied for every CUDA variant of the platform") {
  const Mirror mirror("cudnn", cudnn_releases);
  auto release = plan_mirror_release({"cudnn", "9", "full"}, mirror.source(), "linux-x86_64");
  REQUIRE_MESSAGE(release.ok(), (release.ok() ? "" : release.error().message));
  CHECK(release->version.str() == "9.14.0");
  CHECK(release->product == "cudnn");
  std::vector<std::string> paths;
  for (const auto& a : release->archives) paths.push_back(a.file.relative_path);
  REQUIRE(paths.size() == 4);  // cudnn and cudnn_jit, each for CUDA 12 and 13
  CHECK(std::count_if(paths.begin(), paths.end(),
                      [](const auto& p) { return contains(p, "_cuda12-archive"); }) == 2);
  CHECK(std::count_if(paths.begin(), paths.end(),
                      [](const auto& p) { return contains(p, "_cuda13-archive"); }) == 2);
  // The manifest is kept exactly as the upstream served it.
  CHECK(release->manifest_json == fixture_text("cudnn-redistrib_9.14.0.json"));

  auto sbsa = plan_mirror_release({"cudnn", "9.1", "full"}, mirror.source(), "linux-aarch64");
  REQUIRE(sbsa.ok());
  CHECK(sbsa->archives.size() == 1);  // 9.1.0 ships only a CUDA 12 build for Jetson

  auto nothing = plan_mirror_release({"cudnn", "9.14", "full"}, mirror.source(), "linux-ppc64le");
  REQUIRE_FALSE(nothing.ok());
  CHECK(nothing.error().kind == ErrorKind::not_found);
}

TEST_CASE("plan_mirror_release: CUDA copies the components asked for, bad specs name the flag") {
  const Mirror mirror("cuda", cuda_releases);
  auto release =
      plan_mirror_release({"cuda", "12", "cuda_nvcc,cuda_cudart"}, mirror.source(), "linux-x86_64");
  REQUIRE(release.ok());
  CHECK(release->version.str() == "12.4.1");
  CHECK(names(release->archives) == std::vector<std::string>{"cuda_nvcc", "cuda_cudart"});

  auto bad = plan_mirror_release({"cuda", "12.x", "full"}, mirror.source(), "linux-x86_64");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::usage);
  CHECK(bad.error().message.rfind("--cuda: ", 0) == 0);
}

TEST_CASE("uninstall waits for an install of the same version, then removes it whole") {
  test::TempDir dir;
  const Store store{dir.path()};
  const auto prefix = store.toolkits() / "12.4.1";
  test::write_file(prefix / "bin" / "nvcc", "#!/bin/sh\n");

  auto install_lock = InstallLock::acquire(install_lock_file(prefix), {});
  REQUIRE(install_lock.ok());
  std::promise<void> waiting;
  auto waited = waiting.get_future();
  auto removal = std::async(std::launch::async, [&] {
    return uninstall(store, *Version::parse("12.4.1"), [&] { waiting.set_value(); });
  });
  // It reports the busy lock (a bound that only proves it did not hang).
  REQUIRE(waited.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(fs::exists(prefix / "bin" / "nvcc"));  // nothing removed while the install holds it
  { auto released = std::move(*install_lock); }
  REQUIRE(removal.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(removal.get().ok());
  CHECK_FALSE(fs::exists(prefix));
  // Nothing half-removed is left beside the store's toolkits.
  for (const auto& entry : fs::directory_iterator(store.toolkits()))
    CHECK_MESSAGE(entry.path().filename().string().rfind(".old-", 0) != 0, entry.path());
}

TEST_CASE("uninstall of a version that is not installed is not_found and leaves the lock free") {
  test::TempDir dir;
  const Store store{dir.path()};
  auto missing = uninstall(store, *Version::parse("12.4.1"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().message == "CUDA 12.4.1 is not installed");
  bool waited = false;
  auto lock =
      InstallLock::acquire(install_lock_file(store.toolkits() / "12.4.1"), [&] { waited = true; });
  CHECK(lock.ok());
  CHECK_FALSE(waited);
}
