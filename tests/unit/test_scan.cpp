// scan: ELF and fatbinary reading on binaries built here with the real nvcc, verdicts per GPU,
// and damaged files. Without an nvcc (PATH, $CUDA_HOME, /usr/local/cuda) the nvcc cases say so
// and check nothing.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <doctest/doctest.h>

#include "core/process.hpp"
#include "core/text.hpp"
#include "manifest/load.hpp"
#include "scan/binaries.hpp"
#include "scan/elf.hpp"
#include "scan/fixes.hpp"
#include "scan/mapped_file.hpp"
#include "scan/triton.hpp"
#include "scan/verdict.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::scan;
namespace fs = std::filesystem;

namespace {

std::optional<std::string> find_cuda_tool(const std::string& name) {
  std::vector<std::string> directories =
      text::split(std::getenv("PATH") ? std::getenv("PATH") : "", ':');
  if (const char* home = std::getenv("CUDA_HOME"))
    directories.push_back(std::string(home) + "/bin");
  directories.emplace_back("/usr/local/cuda/bin");
  for (const auto& directory : directories) {
    const auto candidate = directory + "/" + name;
    if (!directory.empty() && fs::exists(candidate)) return candidate;
  }
  return std::nullopt;
}

constexpr const char* kernel_source = R"(
__global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }
extern "C" void launch_scale(float* x) { scale<<<1, 32>>>(x, 2.0f); }
)";

// Three shared libraries built once for the whole test run, in parallel.
struct Built {
  test::TempDir dir;
  std::optional<std::string> nvcc = find_cuda_tool("nvcc");
  std::string error;

  Built() {
    if (!nvcc) return;
    test::write_file(dir.path() / "kernel.cu", kernel_source);
    const std::vector<std::pair<std::string, std::string>> variants{
        {"sm75.so", "arch=compute_75,code=sm_75"},
        {"sm80_ptx.so", "arch=compute_80,code=[sm_80,compute_80]"},
        {"ptx_only.so", "arch=compute_75,code=compute_75"}};
    std::vector<std::thread> builds;
    std::vector<std::string> errors(variants.size());
    for (size_t i = 0; i < variants.size(); ++i) {
      builds.emplace_back([&, i] {
        SystemProcessRunner runner;
        auto run = runner.run({{*nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                                "-gencode", variants[i].second, (dir.path() / "kernel.cu").string(),
                                "-o", (dir.path() / variants[i].first).string()},
                               std::nullopt,
                               std::chrono::minutes(5)});
        if (!run || !run->succeeded()) errors[i] = run ? run->err : run.error().message;
      });
    }
    for (auto& build : builds) build.join();
    for (const auto& message : errors) error += message;
  }
  fs::path path(const std::string& name) const { return dir.path() / name; }
};

const Built& built() {
  static const Built instance;
  return instance;
}

bool have_nvcc() {
  if (!built().nvcc) {
    MESSAGE("skipped: no nvcc on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin");
    return false;
  }
  REQUIRE_MESSAGE(built().error.empty(), built().error);
  return true;
}

std::set<std::string> described(const BinaryScan& scan) {
  std::set<std::string> names;
  for (const auto& code : scan.codes)
    names.insert(code.kind == CodeKind::sass ? describe(code)
                                             : "compute_" + std::to_string(code.arch));
  return names;
}

// The PTX ISA this nvcc writes, from the database of releases: 9.0 for CUDA 13.0.
PtxIsa nvcc_isa(const BinaryScan& scan) {
  for (const auto& code : scan.codes)
    if (code.kind == CodeKind::ptx) return {code.ptx_major, code.ptx_minor};
  return {};
}

}  // namespace

TEST_CASE("scan: sm_75 SASS only runs on Turing and nowhere else") {
  if (!have_nvcc()) return;
  const auto scan = scan_binary(built().path("sm75.so"));
  REQUIRE(scan);
  CHECK(scan->error.empty());
  CHECK(described(*scan) == std::set<std::string>{"sm_75"});
  REQUIRE(scan->cuda_needed.size() == 1);  // -cudart shared
  CHECK(text::starts_with(scan->cuda_needed[0], "libcudart.so."));
  CHECK(verdict_for(scan->codes, 75, std::nullopt).coverage == Coverage::native);
  const auto ampere = verdict_for(scan->codes, 80, std::nullopt);
  CHECK(ampere.coverage == Coverage::none);
  CHECK(text::contains(ampere.reason, "no sm_80 SASS"));
  CHECK(text::contains(fix_for("/v/lib/python3.12/site-packages/myext/_C.so", 80, ampere),
                       "TORCH_CUDA_ARCH_LIST=\"8.0\""));
}

TEST_CASE("scan: sm_80 SASS with compute_80 PTX: native on Ampere, jit on Hopper") {
  if (!have_nvcc()) return;
  const auto scan = scan_binary(built().path("sm80_ptx.so"));
  REQUIRE(scan);
  CHECK(described(*scan) == std::set<std::string>{"sm_80", "compute_80"});
  const auto isa = nvcc_isa(*scan);
  CHECK(isa.major >= 7);  // nvcc 11 writes ISA 7.x, 12 writes 8.x, 13 writes 9.x
  CHECK(verdict_for(scan->codes, 86, isa).via == "sm_80");  // same major, higher minor
  const auto hopper = verdict_for(scan->codes, 90, isa);
  CHECK(hopper.coverage == Coverage::jit);
  CHECK(text::starts_with(hopper.via, "compute_80"));
  // A driver older than this nvcc cannot compile its PTX: nothing runs.
  const auto old_driver = verdict_for(scan->codes, 90,
                                      PtxIsa{isa.major, isa.minor} > PtxIsa{7, 0}
                                          ? std::optional<PtxIsa>(PtxIsa{7, 0})
                                          : std::optional<PtxIsa>(PtxIsa{6, 0}));
  CHECK(old_driver.coverage == Coverage::none);
  CHECK(text::contains(old_driver.reason, "newer than this driver"));
  CHECK(verdict_for(scan->codes, 75, isa).coverage == Coverage::none);
}

TEST_CASE("scan: PTX only is compiled by the driver for any newer GPU") {
  if (!have_nvcc()) return;
  const auto scan = scan_binary(built().path("ptx_only.so"));
  REQUIRE(scan);
  CHECK(described(*scan) == std::set<std::string>{"compute_75"});
  for (int arch : {75, 86, 90, 120})
    CHECK(verdict_for(scan->codes, arch, std::nullopt).coverage == Coverage::jit);
}

TEST_CASE("scan: a walk finds the GPU binaries and skips links and other files") {
  if (!have_nvcc()) return;
  // A site-packages-like tree: nested packages, an extension-less executable, a plain host ELF,
  // a file that only looks like a library, links to a file and to a directory, and the same
  // bytes without the executable bit under a name a library never has.
  test::TempDir outside;
  test::TempDir site;
  const auto root = site.path() / "site-packages";
  for (const char* directory : {"pkg/sub/deep", "other/lib", "bin", "data"})
    fs::create_directories(root / directory);
  fs::copy_file(built().path("sm75.so"), root / "pkg/_C.cpython-312-x86_64-linux-gnu.so");
  fs::copy_file(built().path("sm80_ptx.so"), root / "pkg/sub/deep/libkernels.so.2");
  fs::copy_file(built().path("ptx_only.so"), root / "other/lib/libptx.so");
  fs::copy_file(built().path("sm80_ptx.so"), root / "bin/tool");
  fs::permissions(root / "bin/tool", fs::perms::owner_exec, fs::perm_options::add);
  fs::copy_file(built().path("sm80_ptx.so"), root / "data/blob.bin");
  fs::copy_file("/bin/true", root / "bin/host_only");  // an ELF with no GPU code, no CUDA library
  fs::create_symlink("_C.cpython-312-x86_64-linux-gnu.so", root / "pkg/alias.so");
  fs::copy_file(built().path("sm75.so"), outside.path() / "libelsewhere.so");
  fs::create_directory_symlink(outside.path(), root / "linked_dir");
  test::write_file(root / "pkg/__init__.py", "");
  test::write_file(root / "pkg/fake.so", "not an ELF at all");

  const auto walk = scan_paths({root, site.path() / "missing"});
  std::vector<std::string> found;
  for (const auto& binary : walk.binaries)
    found.push_back(fs::path(binary.path).lexically_relative(root).string());
  CHECK(found == std::vector<std::string>{"bin/tool", "other/lib/libptx.so",
                                          "pkg/_C.cpython-312-x86_64-linux-gnu.so",
                                          "pkg/sub/deep/libkernels.so.2"});
  REQUIRE(walk.binaries.size() == 4);
  CHECK(described(walk.binaries[0]) == std::set<std::string>{"sm_80", "compute_80"});
  CHECK(described(walk.binaries[1]) == std::set<std::string>{"compute_75"});
  CHECK(described(walk.binaries[2]) == std::set<std::string>{"sm_75"});
  for (const auto& binary : walk.binaries) {
    CHECK(binary.error.empty());
    REQUIRE(binary.cuda_needed.size() == 1);
    CHECK(text::starts_with(binary.cuda_needed[0], "libcudart.so."));
  }
  CHECK(walk.files_seen == 17);  // every entry below the root: 7 directories, 10 files and links
  CHECK_FALSE(walk.truncated);
  CHECK(walk.unreadable == std::vector<std::string>{(site.path() / "missing").string()});

  const auto cut = scan_paths({root}, WalkLimits{.max_entries = 3});
  CHECK(cut.truncated);
  CHECK(cut.files_seen == 4);
}

TEST_CASE("scan: truncated and corrupted binaries are errors, never crashes") {
  if (!have_nvcc()) return;
  auto file = MappedFile::open(built().path("sm80_ptx.so"));
  REQUIRE(file);
  const auto image = file->bytes();
  const auto elf = parse_elf(image);
  REQUIRE(elf);
  const auto* fatbin = elf->section(".nv_fatbin");
  REQUIRE(fatbin != nullptr);
  // Every cut of the header area and around the fatbinary: an error value or a valid answer.
  for (size_t length = 0; length < 4096 && length < image.size(); length += 7)
    (void)parse_elf(image.first(length));
  std::vector<unsigned char> copy(image.begin(), image.end());
  for (size_t cut = 0; cut < fatbin->size; cut += 16) {
    const auto section = std::span<const unsigned char>(copy).subspan(fatbin->offset, cut);
    (void)parse_fatbin_section(section);
  }
  // A container that claims more bytes than the section holds.
  copy[fatbin->offset + 8] = 0xff;
  copy[fatbin->offset + 12] = 0x7f;
  const auto damaged = parse_fatbin_section(
      std::span<const unsigned char>(copy).subspan(fatbin->offset, fatbin->size));
  REQUIRE_FALSE(damaged);
  CHECK(text::contains(damaged.error().message, "runs past"));
  // Section headers pointing past the end.
  copy = std::vector<unsigned char>(image.begin(), image.end());
  copy[0x28 + 7] = 0x40;
  CHECK_FALSE(parse_elf(copy));
}

TEST_CASE("scan: ELF files of other classes and plain junk are refused with a reason") {
  std::vector<unsigned char> elf32 = {0x7f, 'E', 'L', 'F', 1, 1, 1};
  elf32.resize(64);
  const auto refused = parse_elf(elf32);
  REQUIRE_FALSE(refused);
  CHECK(text::contains(refused.error().message, "64-bit"));
  const std::vector<unsigned char> junk = {'#', '!', '/', 'b'};
  CHECK_FALSE(parse_elf(junk));
  CHECK_FALSE(is_elf(junk));
}

TEST_CASE("scan: the driver's PTX ISA limit follows the CUDA version it supports") {
  CHECK(ptx_isa_for_driver_cuda(*Version::parse("13.0")) == PtxIsa{9, 0});
  CHECK(ptx_isa_for_driver_cuda(*Version::parse("12.4")) == PtxIsa{8, 4});
  CHECK(ptx_isa_for_driver_cuda(*Version::parse("12.7")) ==
        PtxIsa{8, 5});  // 12.7 was never released
  CHECK(ptx_isa_for_driver_cuda(*Version::parse("11.8")) == PtxIsa{7, 8});
  CHECK_FALSE(ptx_isa_for_driver_cuda(*Version::parse("14.0")));  // newer than the table: unchecked
  CHECK(cuda_for_ptx_isa(9, 0) == "13.0");
  CHECK(parse_arch("8.9") == 89);
  CHECK(parse_arch("sm_120") == 120);
  CHECK(parse_arch("12.0") == 120);
  CHECK_FALSE(parse_arch("ampere"));
}

TEST_CASE("scan: ptxas's release comes from its first filled-in banner, not its printf format") {
  using namespace std::string_literals;
  const auto format_first =
      "\x7f"
      "ELF junk Cuda compilation tools, release %d.%d, V%s\0"
      "more Cuda compilation tools, release 13.0, V13.0.48\0"s;
  const auto release = cudaenv::scan::ptxas_release_in(format_first);
  REQUIRE(release);
  CHECK(release->str() == "13.0");
  CHECK_FALSE(cudaenv::scan::ptxas_release_in("Cuda compilation tools, release %d.%d,"));
  CHECK_FALSE(cudaenv::scan::ptxas_release_in("no banner at all"));
  CHECK_FALSE(cudaenv::scan::ptxas_release_in("Cuda compilation tools, release 13.0"));
}

TEST_CASE("scan: a wrapper script's ptxas is followed one hop, read and never run") {
  using namespace std::string_literals;
  using cudaenv::scan::read_ptxas;
  using cudaenv::scan::wrapped_ptxas;
  test::TempDir dir;
  const auto real = dir.path() / "cuda-12.8/bin/ptxas";
  fs::create_directories(real.parent_path());
  test::write_file(real,
                   "\x7f"
                   "ELF Cuda compilation tools, release 12.8, V12.8.93\0"s);
  const auto wrapper = dir.path() / "ptxas";
  test::write_file(wrapper, "#!/bin/sh\nexec " + real.string() + " \"$@\"\n");

  const auto followed = read_ptxas(wrapper.string());
  REQUIRE(followed.release);
  CHECK(followed.release->str() == "12.8");
  CHECK(followed.runs == real.string());
  const auto direct = read_ptxas(real.string());
  CHECK(direct.release);
  CHECK(direct.runs.empty());

  // The path in a wrapper is the machine's: below a sysroot it is read through the root.
  test::write_file(dir.path() / "in-root", "#!/bin/sh\nexec /cuda-12.8/bin/ptxas \"$@\"\n");
  const auto in_root = read_ptxas((dir.path() / "in-root").string(), [&](const std::string& path) {
    return dir.path().string() + path;
  });
  CHECK(in_root.release);
  CHECK(in_root.runs == "/cuda-12.8/bin/ptxas");

  // A wrapper of a wrapper is not followed, nor one naming itself: no chain, no loop.
  test::write_file(dir.path() / "outer", "#!/bin/sh\nexec " + wrapper.string() + "\n");
  CHECK_FALSE(read_ptxas((dir.path() / "outer").string()).release);
  test::write_file(dir.path() / "self/ptxas",
                   "#!/bin/sh\nexec " + dir.path().string() + "/self/ptxas\n");
  CHECK_FALSE(read_ptxas((dir.path() / "self/ptxas").string()).release);

  CHECK(wrapped_ptxas("#!/bin/sh\nPTXAS='/opt/cuda/bin/ptxas'; exec \"$PTXAS\" \"$@\"\n") ==
        "/opt/cuda/bin/ptxas");
  CHECK_FALSE(wrapped_ptxas("#!/bin/sh\nexec \"$CUDA_HOME/bin/ptxas\" \"$@\"\n"));  // not expanded
  CHECK_FALSE(wrapped_ptxas("exec /opt/cuda/bin/ptxas\n"));                         // no "#!"
  CHECK_FALSE(wrapped_ptxas("#!/bin/sh\nexec /opt/cuda/bin/ptxas-real\n"));
  CHECK_FALSE(
      wrapped_ptxas("#!/bin/sh\n" + std::string(5000, '#') + "\nexec /opt/cuda/bin/ptxas\n"));
}

TEST_CASE("scan: the PyTorch wheel a fix names carries the architecture and runs on the driver") {
  test::TempDir root;
  const auto db = manifest::load_default_database(root.path());
  REQUIRE(db);
  const auto named = [&](int arch, const DriverLimit& driver) {
    const auto wheel = torch_wheel_for(*db, arch, driver);
    return wheel ? wheel->release + " " + wheel->tag : std::string("none");
  };
  CHECK(named(70, {}) == "2.14 cu126");  // CUDA 13 dropped Volta
  CHECK(named(90, {}) == "2.15 cu132");
  CHECK(named(120, {}) == "2.15 cu132");
  // Driver 470 (CUDA 11.4): CUDA 11 wheels through minor-version compatibility, nothing newer.
  const DriverLimit old{Version::parse("470.256.02"), Version::parse("11.4")};
  CHECK(text::ends_with(named(90, old), " cu118"));
  CHECK(named(120, old) == "none");  // Blackwell needs CUDA 12.8
  CHECK(torch_wheel_for(*db, 70, {})->index_url == "https://download.pytorch.org/whl/cu126");
}
