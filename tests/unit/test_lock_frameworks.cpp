// Exact framework versions in the lock: what a resolved build asks of a wheel (series, the
// .cudaenv spec, the local tag of its build), which of an index's files satisfy it, and
// `lock --check` judging a locked version without asking the index.

#include <algorithm>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "lock/framework_index.hpp"
#include "lock/framework_install.hpp"
#include "lock/framework_pin.hpp"
#include "resolve/resolver.hpp"
#include "test_util.hpp"

using namespace cudaenv;

namespace {

std::optional<VersionSpec> spec(const char* text) {
  return std::optional<VersionSpec>(*VersionSpec::parse(text));
}

// The requirement for the torch build the resolver picks for CUDA 12.4 and torch `torch`.
lock::FrameworkRequirement torch_for_cuda_12_4(const char* torch) {
  resolve::Request request;
  request.cuda = *VersionSpec::parse("12.4");
  request.torch = spec(torch);
  const auto resolution =
      resolve::resolve_without_suggestions(test::embedded_database(), {}, request);
  REQUIRE(resolution.ok());
  REQUIRE(resolution.best().frameworks.size() == 1);
  return lock::requirement_for(resolution.best().frameworks[0], test::embedded_database(),
                               spec(torch));
}

fetch::IndexFile file(const std::string& name, bool yanked = false) {
  return {name, "https://i/files/" + name, std::string(64, 'a'), 0, yanked};
}

}  // namespace

TEST_CASE("a wheel's version splits at its local tag, pre-releases are not final releases") {
  const auto plain = lock::parse_wheel_version("2.21.0");
  REQUIRE(plain);
  CHECK(plain->release.str() == "2.21.0");
  CHECK(plain->local_tag.empty());
  const auto tagged = lock::parse_wheel_version("2.5.1+CU124");
  REQUIRE(tagged);
  CHECK(tagged->release.str() == "2.5.1");
  CHECK(tagged->local_tag == "cu124");
  for (const char* bad : {"2.5.0rc1+cu124", "2.5.1.post1", "2.5.1+", "2.5.1+cu 124", "v2.5.1", ""})
    CHECK_MESSAGE(!lock::parse_wheel_version(bad), bad);
}

TEST_CASE("torch's build PyPI serves by default is pinned from its own index, with its tag") {
  const auto torch = torch_for_cuda_12_4("2.5");
  CHECK(torch.project == "torch");
  CHECK(torch.local_tag == "cu124");
  CHECK(torch.index_url == "https://download.pytorch.org/whl/cu124");
  CHECK(lock::describe(torch) == "2.5.* with local tag +cu124");
  CHECK(lock::satisfies(torch, "2.5.1+cu124"));
  CHECK(lock::satisfies(torch, "2.5.0+cu124"));
  CHECK_FALSE(lock::satisfies(torch, "2.5.1"));        // PyPI's, no tag: could be any build
  CHECK_FALSE(lock::satisfies(torch, "2.5.3+cu121"));  // another build
  CHECK_FALSE(lock::satisfies(torch, "2.6.0+cu124"));  // another series
  CHECK_FALSE(lock::satisfies(torch, "2.5.*+cu124"));  // what older locks recorded
  CHECK(lock::pip_line_for(torch, "2.5.1+cu124") ==
        "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124");
}

TEST_CASE("a .cudaenv spec narrower than the series narrows what satisfies it") {
  const auto torch = torch_for_cuda_12_4(">=2.5.1,<2.6");
  CHECK(lock::satisfies(torch, "2.5.1+cu124"));
  CHECK_FALSE(lock::satisfies(torch, "2.5.0+cu124"));
  CHECK(lock::describe(torch) == "2.5.* (>=2.5.1,<2.6) with local tag +cu124");
}

TEST_CASE("the newest fitting version wins, other builds, series, platforms and yanked lose") {
  const auto torch = torch_for_cuda_12_4("2.5");
  const std::vector<fetch::IndexFile> files{
      file("torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl"),
      file("torch-2.5.1+cu124-cp312-cp312-manylinux_2_28_x86_64.whl"),
      file("torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl"),
      file("torch-2.5.1+cu124-cp311-cp311-win_amd64.whl"),
      file("torch-2.5.2+cu124-cp312-cp312-win_amd64.whl"),
      file("torch-2.5.2+cu124-cp312-cp312-macosx_11_0_arm64.whl"),
      file("torch-2.5.3+cu121-cp312-cp312-linux_x86_64.whl"),
      file("torch-2.5.4+cu124-cp312-cp312-linux_x86_64.whl", true),
      file("torch-2.6.0+cu124-cp312-cp312-linux_x86_64.whl"),
      file("torch-2.5.9+cu124-cp312-cp312-linux_aarch64.whl"),
      file("torchvision-2.5.8+cu124-cp312-cp312-linux_x86_64.whl"),
      file("torch-2.5.7rc1+cu124-cp312-cp312-linux_x86_64.whl"),
  };
  const auto pick = lock::newest_fit(torch, files);
  REQUIRE(pick);
  CHECK(pick->version == "2.5.1+cu124");
  REQUIRE(pick->wheels.size() == 2);  // both Linux x86-64 wheels of it, by name; not Windows's
  CHECK(pick->wheels[0].filename == "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
  CHECK(pick->wheels[1].filename == "torch-2.5.1+cu124-cp312-cp312-manylinux_2_28_x86_64.whl");
  const auto locked = lock::pinned(torch, *pick);
  CHECK(locked.version == "2.5.1+cu124");
  CHECK(locked.pip ==
        "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124");
  const auto offered = lock::offered_versions(torch, files, 3);
  CHECK(offered == std::vector<std::string>{"2.6.0+cu124", "2.5.3+cu121", "2.5.1+cu124"});
  CHECK_FALSE(lock::newest_fit(torch, {files[3], files[4], files[6], files[8]}));
}

TEST_CASE("Linux x86-64 wheels: manylinux, PyTorch's linux_x86_64, and pure Python") {
  CHECK(lock::installs_on_linux_x86_64({"manylinux_2_17_x86_64", "manylinux2014_x86_64"}));
  CHECK(lock::installs_on_linux_x86_64({"linux_x86_64"}));
  CHECK(lock::installs_on_linux_x86_64({"any"}));
  CHECK_FALSE(lock::installs_on_linux_x86_64({"manylinux2014_aarch64"}));
  CHECK_FALSE(lock::installs_on_linux_x86_64({"musllinux_1_2_x86_64"}));
  CHECK_FALSE(lock::installs_on_linux_x86_64({"win_amd64", "macosx_11_0_x86_64"}));
}

TEST_CASE("frameworks PyPI serves keep their line's extras and flags, with no local tag") {
  resolve::Request request;
  request.cuda = *VersionSpec::parse("12");
  request.jax = spec("12");
  const auto resolution =
      resolve::resolve_without_suggestions(test::embedded_database(), {}, request);
  REQUIRE(resolution.ok());
  const auto jax =
      lock::requirement_for(resolution.best().frameworks[0], test::embedded_database(), spec("12"));
  CHECK(jax.project == "jax");
  CHECK(jax.local_tag.empty());
  CHECK(jax.index_url == "https://pypi.org/simple");
  CHECK(lock::satisfies(jax, "0.4.35"));  // the pin names the CUDA major, not a JAX version
  CHECK(lock::pip_line_for(jax, "0.4.35") == "pip install -U \"jax[cuda12]==0.4.35\"");
  const lock::FrameworkIndexes indexes{
      "http://127.0.0.1:9/simple", "", "http://127.0.0.1:9/whl", "", {}};
  CHECK(lock::lookup_url(jax, indexes) == "http://127.0.0.1:9/simple");
  CHECK(lock::lookup_url(torch_for_cuda_12_4("2.5"), indexes) == "http://127.0.0.1:9/whl/cu124");
}

TEST_CASE(
    "the check keeps an exact lock that still satisfies .cudaenv, and names one that does "
    "not") {
  const auto torch = torch_for_cuda_12_4("2.5");
  std::map<std::string, lock::LockedFramework> locked{
      {"torch", {"2.5.1+cu124", torch.index_url, lock::pip_line_for(torch, "2.5.1+cu124"), {}}}};
  auto checked = lock::check_frameworks(locked, {torch});
  CHECK(checked.problems.empty());
  CHECK(checked.current.at("torch").version == "2.5.1+cu124");
  locked["torch"].version = "2.5.*+cu124";
  checked = lock::check_frameworks(locked, {torch});
  REQUIRE(checked.problems.size() == 1);
  CHECK(checked.problems[0] ==
        "frameworks.torch.version: the lock has \"2.5.*+cu124\", now an exact release of 2.5.* "
        "with local tag +cu124");
  locked["torch"].version = "2.5.1+cu124";
  locked["torch"].pip = "pip install torch==2.5.0+cu124";
  checked = lock::check_frameworks(locked, {torch});
  REQUIRE(checked.problems.size() == 1);
  CHECK(checked.problems[0].rfind("frameworks.torch.pip: the lock has", 0) == 0);
  CHECK(lock::check_frameworks({}, {torch}).problems ==
        std::vector<std::string>{"frameworks.torch: wanted now, not in the lock"});
}

namespace {

lock::LockedFramework locked_torch(std::vector<std::string> filenames) {
  lock::LockedFramework framework;
  framework.version = "2.5.1+cu124";
  framework.index_url = "https://download.pytorch.org/whl/cu124";
  framework.pip_args = {"torch==2.5.1+cu124", "--index-url", framework.index_url};
  for (auto& name : filenames) framework.wheels.push_back({std::move(name), std::string(64, 'b')});
  return framework;
}

}  // namespace

TEST_CASE("sync takes the locked wheel this Python installs: its own build before abi3 and pure") {
  const auto framework = locked_torch({"torch-2.5.1+cu124-py3-none-any.whl",
                                       "torch-2.5.1+cu124-cp39-abi3-manylinux_2_28_x86_64.whl",
                                       "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl",
                                       "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl",
                                       "torch-2.5.1+cu124-cp313-cp313t-linux_x86_64.whl"});
  const auto pick = [&](const char* python) {
    const auto wheel = lock::wheel_for_python(framework, *lock::parse_python_version(python));
    return wheel ? wheel->filename : std::string("none");
  };
  CHECK(pick("3.12") == "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl");
  CHECK(pick("3.11") == "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
  CHECK(pick("3.10") == "torch-2.5.1+cu124-cp39-abi3-manylinux_2_28_x86_64.whl");
  CHECK(pick("3.8") == "torch-2.5.1+cu124-py3-none-any.whl");  // abi3 of 3.9 is too new
  const auto windows_only = locked_torch({"torch-2.5.1+cu124-cp312-cp312-win_amd64.whl"});
  CHECK_FALSE(lock::wheel_for_python(windows_only, {3, 12}));
  CHECK_FALSE(lock::parse_python_version("3"));
  CHECK_FALSE(lock::parse_python_version("3.12.1"));
}

TEST_CASE("the requirement, the project and the hashed line come from the checked pip args") {
  auto jax = locked_torch({});
  jax.version = "0.5.0";
  jax.pip_args = {"-U", "jax[cuda12]==0.5.0"};
  CHECK(lock::locked_requirement(jax) == "jax[cuda12]==0.5.0");
  CHECK(lock::locked_project(jax) == "jax");
  CHECK(lock::locked_project(locked_torch({})) == "torch");
  CHECK(lock::hashed_requirement("torch", "http://i/files/t.whl", std::string(64, 'c')) ==
        "torch @ http://i/files/t.whl --hash=sha256:" + std::string(64, 'c') + "\n");
  const auto pip = lock::hashed_install_argv(lock::Installer::pip, "", "/v/bin/python", "/r.txt");
  CHECK(std::find(pip.begin(), pip.end(), "--require-hashes") != pip.end());
  CHECK(std::find(pip.begin(), pip.end(), "--no-deps") != pip.end());
  CHECK(pip.front() == "/v/bin/python");
  const auto uv = lock::hashed_install_argv(lock::Installer::uv, "/u/uv", "/v/bin/python", "/r");
  CHECK(uv.front() == "/u/uv");
  CHECK(uv[3] == "--python");
  CHECK(uv[4] == "/v/bin/python");
}

TEST_CASE("the locked build's CUDA and cuDNN come from the database, compared part by part") {
  const auto& db = test::embedded_database();
  const auto torch = lock::expected_build(db, "torch", locked_torch({}));
  REQUIRE(torch.cuda);
  REQUIRE(torch.cudnn);
  CHECK(torch.cuda->str() == "12.4");
  CHECK(torch.cudnn->str() == "9.1.0.70");
  CHECK(lock::agrees("12.4", *torch.cuda));
  CHECK_FALSE(lock::agrees("12.1", *torch.cuda));
  CHECK(lock::agrees("9.1.0", *torch.cudnn));
  CHECK(lock::agrees("9", *torch.cudnn));  // TensorFlow reports the major alone
  CHECK_FALSE(lock::agrees("8.9.2", *torch.cudnn));
  CHECK_FALSE(lock::agrees("", *torch.cudnn));
  auto jax = locked_torch({});
  jax.version = "0.5.0";
  jax.pip_args = {"-U", "jax[cuda12]==0.5.0"};
  const auto plugin = lock::expected_build(db, "jax", jax);
  REQUIRE(plugin.cuda);
  CHECK(plugin.cuda->str() == "12");
  CHECK_FALSE(plugin.cudnn);
}
