// Companion wheels locked beside torch: the versions they carry (post-releases, local labels),
// what their tags and METADATA say of the torch and CUDA they are built for, and `lock --check`
// judging a locked companion without asking the index.

#include <map>
#include <string>

#include <doctest/doctest.h>

#include "lock/framework_companion.hpp"
#include "lock/framework_install.hpp"

using namespace cudaenv;

namespace {

lock::TorchBuild torch_cu124() {
  return {*Version::parse("2.5.1"), "cu124", "https://download.pytorch.org/whl/cu124"};
}

lock::LockedFramework locked_torch() {
  return {"2.5.1+cu124",
          "https://download.pytorch.org/whl/cu124",
          "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
          {},
          {}};
}

lock::LockedFramework locked_flash(const std::string& version) {
  return {version, "https://pypi.org/simple", "pip install flash-attn==" + version, {}, {},
          "torch"};
}

}  // namespace

TEST_CASE("a companion's version: post-releases and local labels, no pre-releases") {
  const auto xformers = lock::parse_companion_version("0.0.28.post3");
  REQUIRE(xformers);
  CHECK(xformers->release.str() == "0.0.28");
  CHECK(xformers->post == 3);
  CHECK(xformers->local_tag.empty());
  const auto flash = lock::parse_companion_version("2.7.4.post1+cu12torch2.5cxx11abiFALSE");
  REQUIRE(flash);
  CHECK(flash->local_tag == "cu12torch2.5cxx11abifalse");
  for (const char* bad : {"2.7.0rc1", "2.7.dev3", "2.7.4.post", "2.7+", "2.7+a-b", "x2.7"})
    CHECK_MESSAGE(!lock::parse_companion_version(bad), bad);
}

TEST_CASE("tags name the CUDA build or its major, and the torch series") {
  const auto torch = torch_cu124();
  auto fit = lock::tag_fit("cu12torch2.5cxx11abifalse", torch);
  CHECK((fit.names_cuda && fit.cuda_agrees && fit.names_torch && fit.torch_agrees));
  fit = lock::tag_fit("cu124torch2.5.1", torch);
  CHECK((fit.cuda_agrees && fit.torch_agrees));
  fit = lock::tag_fit("cu118torch2.5", torch);
  CHECK((fit.names_cuda && !fit.cuda_agrees));
  fit = lock::tag_fit("cu1torch2.4", torch);
  CHECK((!fit.cuda_agrees && fit.names_torch && !fit.torch_agrees));
  fit = lock::tag_fit("", torch);
  CHECK((!fit.names_cuda && !fit.names_torch));
}

TEST_CASE("the wheel's requirement on torch, extras' requirements left out") {
  auto found = lock::torch_requirement(
      "Name: xformers\nRequires-Dist: numpy\nRequires-Dist: torch==2.5.1\n"
      "Requires-Dist: torch>=9; extra == 'dev'\n");
  REQUIRE(found.present);
  REQUIRE(found.spec);
  CHECK(found.spec->matches(*Version::parse("2.5.1")));
  CHECK(!found.spec->matches(*Version::parse("2.4.1")));
  found = lock::torch_requirement("Requires-Dist: torch (>=2.5, <2.6)\n");
  CHECK((found.spec && found.spec->matches(*Version::parse("2.5.1"))));
  found = lock::torch_requirement("Requires-Dist: torch==2.5.*\n");
  CHECK((found.spec && found.spec->matches(*Version::parse("2.5.1"))));
  found = lock::torch_requirement("Requires-Dist: torch\nRequires-Dist: torchvision==0.20\n");
  CHECK((found.present && !found.spec && found.readable));
  found = lock::torch_requirement("Requires-Dist: torch~=2.5\n");
  CHECK((found.present && !found.readable));
  CHECK(!lock::torch_requirement("Requires-Dist: einops\n").present);
}

TEST_CASE("a build fits when nothing contradicts the locked torch and something ties it to it") {
  const auto torch = torch_cu124();
  const auto pinned = lock::torch_requirement("Requires-Dist: torch==2.5.1\n");
  const auto other = lock::torch_requirement("Requires-Dist: torch==2.4.1\n");
  const auto any = lock::torch_requirement("Requires-Dist: torch\n");
  const auto both = lock::tag_fit("cu12torch2.5", torch);
  const auto cuda_only = lock::tag_fit("cu124", torch);
  const auto none = lock::tag_fit("", torch);
  CHECK(lock::fits_torch(both, any, torch, false));          // flash-attn: its tags say it
  CHECK(lock::fits_torch(cuda_only, pinned, torch, false));  // its METADATA says the torch
  CHECK(!lock::fits_torch(cuda_only, other, torch, false));
  CHECK(!lock::fits_torch(cuda_only, any, torch, false));  // nothing ties it to this torch
  CHECK(!lock::fits_torch(none, pinned, torch, false));    // PyPI: CUDA unknown
  CHECK(lock::fits_torch(none, pinned, torch, true));      // torch's cu124 index: its CUDA
  CHECK(!lock::fits_torch(both, other, torch, false));
}

TEST_CASE("lock --check keeps a companion that fits .cudaenv and the locked torch") {
  std::map<std::string, lock::LockedFramework> locked{
      {"torch", locked_torch()}, {"flash-attn", locked_flash("2.7.4+cu12torch2.5")}};
  std::map<std::string, VersionSpec> asked{{"flash-attn", *VersionSpec::parse("2.7")}};
  auto check = lock::check_companions(locked, asked);
  CHECK(check.problems.empty());
  CHECK(check.current.count("flash-attn") == 1);
  asked.at("flash-attn") = *VersionSpec::parse("2.8");
  check = lock::check_companions(locked, asked);
  REQUIRE(check.problems.size() == 1);
  CHECK(check.problems[0] ==
        "frameworks.flash-attn.version: the lock has \"2.7.4+cu12torch2.5\", now 2.8");
  asked.at("flash-attn") = *VersionSpec::parse("*");
  locked.at("flash-attn") = locked_flash("2.7.4+cu12torch2.4");
  check = lock::check_companions(locked, asked);
  REQUIRE(check.problems.size() == 1);
  CHECK(check.problems[0] ==
        "frameworks.flash-attn.version: the lock has \"2.7.4+cu12torch2.4\", not a build for torch "
        "2.5.1+cu124");
  // torch locked anew for CUDA 11.8: a companion tagged for 12.x no longer fits it.
  locked.at("flash-attn") = locked_flash("2.7.4+cu124torch2.5");
  locked.at("torch").version = "2.5.1+cu118";
  check = lock::check_companions(locked, asked);
  REQUIRE(check.problems.size() == 1);
  CHECK(
      check.problems[0] ==
      "frameworks.flash-attn.version: the lock has \"2.7.4+cu124torch2.5\", not a build for torch "
      "2.5.1+cu118");
  // A companion whose index is neither torch's nor PyPI's, as a hostile lock could name it.
  locked.at("torch") = locked_torch();
  locked.at("flash-attn").index_url = "https://evil.example/simple";
  check = lock::check_companions(locked, asked);
  REQUIRE(check.problems.size() == 2);
  CHECK(
      check.problems[0] ==
      "frameworks.flash-attn.index_url: the lock has \"https://evil.example/simple\", now torch's "
      "index or PyPI's");
  locked.erase("flash-attn");
  check = lock::check_companions(locked, asked);
  REQUIRE(check.problems.size() == 1);
  CHECK(check.problems[0] ==
        "frameworks.flash-attn: wanted now as a companion of torch, not in the lock");
}

TEST_CASE("a companion imports as its name with underscores") {
  CHECK(lock::companion_module("flash-attn") == "flash_attn");
  CHECK(lock::companion_module("Flash.Attn") == "flash_attn");
  CHECK(lock::companion_module("xformers") == "xformers");
}
