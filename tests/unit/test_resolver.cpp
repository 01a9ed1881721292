// Table-driven resolver tests. Each row names the published fact it rests on (keys of
// manifests/sources.toml: RN131 = CUDA release notes Table 3, MVC = minor-version compatibility,
// SPACK/NIX_CAP = architectures per CUDA, PT_* = PyTorch, TF = TensorFlow, JAX, CUDNN_SM = cuDNN
// support matrix, NIX_NVCC = host compilers).

#include <algorithm>

#include <doctest/doctest.h>

#include "manifest/load.hpp"
#include "resolve/resolver.hpp"
#include "test_util.hpp"

using namespace cudaenv;
using namespace cudaenv::resolve;

namespace {

const manifest::Database& db() { return test::embedded_database(); }

std::optional<Version> v(const char* text) { return text ? Version::parse(text) : std::nullopt; }
std::optional<VersionSpec> spec(const char* text) {
  return text ? std::optional<VersionSpec>(*VersionSpec::parse(text)) : std::nullopt;
}

struct Case {
  const char* name;
  const char* source;
  // target
  const char* driver = nullptr;
  std::vector<const char*> gpus = {};
  const char* gcc = nullptr;
  // request
  const char* cuda = nullptr;
  const char* cudnn = nullptr;
  const char* torch = nullptr;
  const char* tensorflow = nullptr;
  const char* jax = nullptr;
  // expectations (nullptr: not checked)
  bool ok = true;
  const char* expect_cuda = nullptr;
  const char* expect_mode = nullptr;
  const char* expect_cudnn = nullptr;       // full version
  const char* expect_variant = nullptr;     // of the first framework
  const char* expect_warning = nullptr;     // substring of some warning
  const char* expect_no_warning = nullptr;  // substring no warning may contain
  const char* expect_suggestion = nullptr;  // substring of some suggestion
  const char* expect_rejection = nullptr;   // substring of some rejection reason
};

Resolution run(const Case& c) {
  Target target;
  target.driver = v(c.driver);
  for (const auto* gpu : c.gpus) target.gpus.push_back(*Version::parse(gpu));
  target.gcc = v(c.gcc);
  Request request{spec(c.cuda), spec(c.cudnn), spec(c.torch), spec(c.tensorflow), spec(c.jax)};
  return resolve::resolve(db(), target, request);
}

bool any_contains(const std::vector<std::string>& texts, const char* needle) {
  return std::any_of(texts.begin(), texts.end(),
                     [&](const auto& t) { return t.find(needle) != std::string::npos; });
}

void check_case(const Case& c) {
  const std::string name = c.name;
  const std::string source = c.source;
  CAPTURE(name);
  CAPTURE(source);
  const auto r = run(c);
  REQUIRE(r.ok() == c.ok);
  if (r.ok()) {
    const auto& best = r.best();
    if (c.expect_cuda) CHECK(best.cuda->version.str() == c.expect_cuda);
    if (c.expect_mode) CHECK(std::string(to_string(best.driver.mode)) == c.expect_mode);
    if (c.expect_cudnn) {
      REQUIRE(best.cudnn != nullptr);
      CHECK(best.cudnn->full_version.str() == c.expect_cudnn);
    }
    if (c.expect_variant) {
      REQUIRE_FALSE(best.frameworks.empty());
      CHECK(best.frameworks.front().variant == c.expect_variant);
    }
    if (c.expect_warning)
      CHECK_MESSAGE(any_contains(best.warnings, c.expect_warning), "warnings lack it");
    if (c.expect_no_warning) CHECK_FALSE(any_contains(best.warnings, c.expect_no_warning));
  }
  if (c.expect_suggestion)
    CHECK_MESSAGE(any_contains(r.suggestions, c.expect_suggestion), "suggestions lack it");
  if (c.expect_rejection) {
    std::vector<std::string> reasons;
    for (const auto& rejection : r.rejected) reasons.push_back(rejection.reason);
    CHECK_MESSAGE(any_contains(reasons, c.expect_rejection), "rejections lack it");
  }
}

// clang-format off
const Case driver_cases[] = {
  {.name = "driver 470.82.01 gets CUDA 11.4 Update 4 with full support", .source = "RN131 Table 3: 11.4 Update 4 >= 470.82.01",
   .driver = "470.82.01", .expect_cuda = "11.4.4", .expect_mode = "full"},  {.name = "driver 470.57.02 stops at 11.4 Update 2", .source = "RN131 Table 3: 11.4 Update 3 needs 470.82.01",
   .driver = "470.57.02", .expect_cuda = "11.4.2", .expect_mode = "full"},  {.name = "driver 470 runs CUDA 11.8 only in minor-compat mode", .source = "MVC: 11.x >= 450.80.02; RN131: 11.8 >= 520.61.05",
   .driver = "470.82.01", .cuda = "11.8", .expect_cuda = "11.8.0", .expect_mode = "minor-compat", .expect_warning = "minor-version-compatibility"},  {.name = "driver 470 cannot run CUDA 12", .source = "MVC: 12.x needs >= 525.60.13",
   .driver = "470.82.01", .cuda = "12", .ok = false, .expect_suggestion = ">= 525.60.13", .expect_rejection = "minor-compat >= 525.60.13"},  {.name = "driver 525.60.13 gets CUDA 12.0 GA", .source = "RN131 Table 3: 12.0 GA >= 525.60.13",
   .driver = "525.60.13", .expect_cuda = "12.0.0", .expect_mode = "full"},  {.name = "driver 525.85.12 gets CUDA 12.0 Update 1", .source = "RN131 Table 3: 12.0 Update 1 >= 525.85.12",
   .driver = "525.85.12", .expect_cuda = "12.0.1", .expect_mode = "full"},  {.name = "driver 525 runs CUDA 12.4 in minor-compat mode", .source = "MVC 12.x >= 525.60.13; RN131 12.4 Update 1 >= 550.54.15",
   .driver = "525.60.13", .cuda = "12.4", .expect_cuda = "12.4.1", .expect_mode = "minor-compat"},  {.name = "driver 535.104.05 gets CUDA 12.2 Update 2", .source = "RN131 Table 3: 12.2 Update 2 >= 535.104.05",
   .driver = "535.104.05", .expect_cuda = "12.2.2", .expect_mode = "full"},  {.name = "driver 535.54.03 gets CUDA 12.2 GA", .source = "RN131 Table 3: 12.2 GA >= 535.54.03",
   .driver = "535.54.03", .expect_cuda = "12.2.0", .expect_mode = "full"},  {.name = "driver 550.54.15 gets CUDA 12.4 Update 1", .source = "RN131 Table 3",
   .driver = "550.54.15", .cuda = "12", .expect_cuda = "12.4.1", .expect_mode = "full"},  {.name = "driver below 11.x's floor cannot run 11.8", .source = "MVC: 11.x >= 450.80.02",
   .driver = "450.51.05", .cuda = "11.8", .ok = false, .expect_suggestion = "520.61.05"},  {.name = "driver 575 cannot run CUDA 13; the fix names branch 580", .source = "MVC: 13.x >= 580; RN131 13.0 GA >= 580.65.06",
   .driver = "575.57.08", .cuda = "13", .ok = false, .expect_suggestion = "nvidia-driver-580"},  {.name = "driver 580.65.06 gets CUDA 13.0 GA", .source = "RN131 Table 3: 13.0 GA >= 580.65.06",
   .driver = "580.65.06", .cuda = "13", .expect_cuda = "13.0.0", .expect_mode = "full"},  {.name = "driver 580.95.05 gets the 13.0.3 refresh, which has 13.0.2's components", .source = "RN131 Table 3: 13.0 Update 2 >= 580.95.05; MAN: 13.0.3 ships 13.0.2's nvcc and cudart",
   .driver = "580.95.05", .cuda = "13.0", .expect_cuda = "13.0.3", .expect_mode = "full"},  {.name = "no driver known: no driver constraint", .source = "DESIGN: resolve without a driver on login nodes",
   .cuda = "12.4", .expect_cuda = "12.4.1", .expect_mode = "unchecked"},};

const Case arch_cases[] = {
  {.name = "sm_88 is known from CUDA 13.0", .source = "PYPI_NVCC: nvcc 13.0.48 to 13.5.37 list sm_88",
   .gpus = {"8.8"}, .cuda = "13.0", .expect_cuda = "13.0.3"},
  {.name = "sm_88 has no CUDA 12 target; CUDA 12's sm_87 code runs on it", .source = "PYPI_NVCC: ptxas 12.9.86 rejects sm_88; NVIDIA CUDA C++ Programming Guide, Binary Compatibility: a cubin for X.y runs on X.z, z >= y",
   .gpus = {"8.8"}, .cuda = "12", .expect_cuda = "12.9.2", .expect_warning = "its sm_87 code runs on this GPU (binary compatibility within compute capability 8.x); to compile for sm_88 itself: sm_88 (unnamed) needs CUDA >= 13.0"},
  {.name = "sm_107 has no CUDA 13.3 target; its sm_103 code runs on it", .source = "PYPI_NVCC: nvcc 13.4.92 lists sm_107, 13.3.73 does not; Programming Guide, Binary Compatibility",
   .gpus = {"10.7"}, .cuda = "13.3", .expect_warning = "to compile for sm_107 itself: sm_107 (Rubin) needs CUDA >= 13.4"},
  {.name = "--arch 12.1 --cuda 12.8 fits through sm_120", .source = "SPACK/NIX_CAP: sm_121 first in 12.9, sm_120 in 12.8; Programming Guide, Binary Compatibility",
   .gpus = {"12.1"}, .cuda = "12.8", .expect_warning = "its sm_120 code runs on this GPU"},
  {.name = "a B300 on CUDA 12.9 is native: no family note", .source = "SPACK/NIX_CAP: sm_103 first in 12.9",
   .gpus = {"10.3"}, .cuda = "12.9", .expect_no_warning = "binary compatibility"},
  {.name = "no older member of the family: sm_120 cannot use CUDA 12.6", .source = "SPACK/NIX_CAP: sm_120 first in 12.8, the first 12.x architecture",
   .gpus = {"12.0"}, .cuda = "12.6", .ok = false, .expect_rejection = "sm_120 (Blackwell) needs CUDA >= 12.8"},
  {.name = "sm_35 (K40) cannot use CUDA 12", .source = "SPACK/NIX_CAP: sm_35 last in 11.8",
   .gpus = {"3.5"}, .cuda = "12", .ok = false, .expect_suggestion = "sm_35 (Kepler) needs CUDA 5.0 to 11.8"},  {.name = "sm_35 gets CUDA 11.8", .source = "SPACK/NIX_CAP: sm_35 last in 11.8",
   .gpus = {"3.5"}, .expect_cuda = "11.8.0"},  {.name = "sm_37 (K80) gets CUDA 11.8", .source = "SPACK/NIX_CAP: sm_37 last in 11.8",
   .gpus = {"3.7"}, .expect_cuda = "11.8.0"},  {.name = "sm_61 (GTX 1080) stops at CUDA 12.9", .source = "RN131 2.5.2: Pascal removed in 13.0; MAN: 12.9.2 is the last 12.9 label",
   .gpus = {"6.1"}, .expect_cuda = "12.9.2"},  {.name = "sm_61 cannot use CUDA 13", .source = "RN131 2.5.2",
   .gpus = {"6.1"}, .cuda = "13", .ok = false, .expect_suggestion = "sm_61 (Pascal) needs CUDA 8.0 to 12.9", .expect_rejection = "needs CUDA <= 12.9"},  {.name = "sm_70 (V100) stops at CUDA 12.9", .source = "RN131 2.5.2: Volta removed in 13.0; MAN: 12.9.2 is the last 12.9 label",
   .gpus = {"7.0"}, .expect_cuda = "12.9.2"},  {.name = "sm_70 with a CUDA 13 driver still gets 12.9 with full support", .source = "RN131 2.5.2; RN131 Table 3",
   .driver = "580.95.05", .gpus = {"7.0"}, .expect_cuda = "12.9.2", .expect_mode = "full"},  {.name = "sm_75 (T4) works with CUDA 13", .source = "NIX_CAP; JAX: CUDA 13 needs SM 7.5+",
   .driver = "580.95.05", .gpus = {"7.5"}, .cuda = "13.0", .expect_cuda = "13.0.3"},  {.name = "sm_89 (RTX 4090) needs CUDA 11.8 or newer", .source = "SPACK/NIX_CAP: sm_89 first in 11.8",
   .gpus = {"8.9"}, .cuda = "11", .expect_cuda = "11.8.0"},  {.name = "sm_89 on CUDA 11.7 runs its sm_86 code", .source = "SPACK/NIX_CAP: sm_89 first in 11.8; Programming Guide, Binary Compatibility",
   .gpus = {"8.9"}, .cuda = "11.7", .expect_warning = "to compile for sm_89 itself: sm_89 (Ada) needs CUDA >= 11.8"},  {.name = "sm_90 (H100/H200) gets CUDA 11.8 at the oldest", .source = "NIX_CAP: sm_90 first in 11.8",
   .gpus = {"9.0"}, .cuda = "11", .expect_cuda = "11.8.0"},  {.name = "sm_90 on a 580 driver gets the newest 13.0 label with full support", .source = "RN131 Table 3; NIX_CAP; MAN: 13.0.3 ships 13.0.2's nvcc and cudart",
   .driver = "580.95.05", .gpus = {"9.0"}, .cuda = "<13.1", .expect_cuda = "13.0.3", .expect_mode = "full"},  {.name = "sm_120 (RTX 5090) needs CUDA 12.8", .source = "SPACK/NIX_CAP: sm_120 first in 12.8",
   .gpus = {"12.0"}, .cuda = "<12.8", .ok = false, .expect_suggestion = "sm_120 (Blackwell) needs CUDA >= 12.8"},  {.name = "sm_120 on driver 570.124.06 gets the 12.8.2 refresh of 12.8 Update 1", .source = "RN131 Table 3: 12.8 Update 1 >= 570.124.06; MAN: 12.8.2 ships 12.8.1's nvcc and cudart",
   .driver = "570.124.06", .gpus = {"12.0"}, .expect_cuda = "12.8.2", .expect_mode = "full"},  {.name = "sm_100 (B200) with driver 535 needs a newer driver", .source = "SPACK: sm_100 first in 12.8; CUDNN_SM: CC 10.0 needs driver >= 570",
   .driver = "535.104.05", .gpus = {"10.0"}, .ok = false, .expect_suggestion = "upgrade the NVIDIA driver to >= 570.26",
   .expect_rejection = "sm_100 (Blackwell) needs driver >= 570.26"},  {.name = "a Pascal and a Hopper GPU together get the last CUDA both support", .source = "RN131 2.5.2; NIX_CAP",
   .gpus = {"6.1", "9.0"}, .expect_cuda = "12.9.2"},};

const Case framework_cases[] = {
  {.name = "torch 2.15 gets its PyPI build: CUDA 13.2 with cuDNN 9.26.0.51", .source = "PYPI_TORCH: torch 2.15.0 requires cuda-toolkit 13.2.2, nvidia-cudnn-cu13 9.26.0.51",
   .torch = "2.15", .expect_cuda = "13.2.2", .expect_cudnn = "9.26.0.51", .expect_variant = "cu132"},
  {.name = "torch 2.8 on a GTX 1080 gets cu126, not the Pascal-less cu128", .source = "PT_REL: 2.8 removed Maxwell/Pascal from cu128",
   .gpus = {"6.1"}, .torch = "2.8", .expect_cuda = "12.6.3", .expect_cudnn = "9.10.2.21", .expect_variant = "cu126", .expect_rejection = "has no kernels for sm_61"},  {.name = "torch 2.8 on an RTX 5090 gets a Blackwell build", .source = "PT_REL arch matrix: cu128/cu129 carry 12.0",
   .gpus = {"12.0"}, .torch = "2.8", .expect_variant = "cu128", .expect_no_warning = "experimental"},
  {.name = "a B300 takes the stable cu128 wheel through its sm_100 code", .source = "NVIDIA CUDA C++ Programming Guide, Binary Compatibility: a cubin for X.y runs on X.z, z >= y; PT_REL: cu128 carries 10.0, cu129 is experimental",
   .driver = "580.95.05", .gpus = {"10.3"}, .torch = "2.8", .expect_variant = "cu128", .expect_warning = "its sm_100 code runs on this GPU"},
  {.name = "an A100 on R525 asking for torch 2.8 gets the stable cu128, not the experimental cu129", .source = "PT_REL 2.8: cu126, cu128 stable, cu129 experimental; PT_PYPI: 2.8's PyPI default cu128; MVC 12.x floor 525.60.13",
   .driver = "525.147.05", .gpus = {"8.0"}, .torch = "2.8", .expect_mode = "minor-compat", .expect_variant = "cu128"},  {.name = "torch 2.6 has no build for sm_120; a newer torch does", .source = "PT_REL: sm_120 needs cu128 (>= 2.7)",
   .gpus = {"12.0"}, .torch = "2.6", .ok = false, .expect_suggestion = "--torch 2.7 would fit"},  {.name = "torch 2.4 with driver 535 prefers cu121 with full support over cu124 minor-compat", .source = "PT_REL 2.4 variants; RN131 12.1 >= 530.30.02",
   .driver = "535.104.05", .torch = "2.4", .expect_cuda = "12.1.1", .expect_mode = "full", .expect_cudnn = "9.1.0.70", .expect_variant = "cu121"},  {.name = "torch 2.4 with driver 550 gets PyPI's cu121: every build is stable and fully supported", .source = "PT_REL 2.4: cu118, cu121, cu124 stable; PT_PYPI: 2.4's PyPI default cu121; RN131 12.4 Update 1 >= 550.54.15",
   .driver = "550.54.15", .torch = "2.4", .expect_cuda = "12.1.1", .expect_mode = "full", .expect_variant = "cu121"},  {.name = "torch 1.13 gets the stable cu116, not the experimental cu117", .source = "PT_REL/PT_PREV: 1.13 cu116 stable, cu117 experimental",
   .gpus = {"8.6"}, .torch = "1.13", .expect_cuda = "11.6.2", .expect_cudnn = "8.3.2.44", .expect_variant = "cu116"},  {.name = "torch 2.4 has no CUDA 12.6 build", .source = "PT_REL 2.4: cu118, cu121, cu124",
   .cuda = "12.6", .torch = "2.4", .ok = false, .expect_suggestion = "--cuda 12.4 would fit"},  {.name = "torch and an impossible cuDNN pin", .source = "PT_REL: 2.4 bundles cuDNN 9.1.0.70",
   .cudnn = "8.9", .torch = "2.4", .ok = false, .expect_suggestion = "--cudnn 9.1.0 would fit"},  {.name = "torch 2.9 on sm_61 + sm_90 takes cu126, which covers both", .source = "PT_REL 2.9 arch matrix: cu126 = 5.0 ... 9.0",
   .gpus = {"6.1", "9.0"}, .torch = "2.9", .expect_variant = "cu126"},  {.name = "torch 2.12 needs a 12.6 or 13.x driver; 535 only gets minor-compat cu126", .source = "PT_REL 2.12: cu126, cu130, cu132",
   .driver = "535.104.05", .torch = "2.12", .expect_mode = "minor-compat", .expect_variant = "cu126"},  {.name = "tensorflow 2.15's tested configuration is CUDA 12.2 + cuDNN 8.9", .source = "TF source.md: 2.15.0 CUDA 12.2 cuDNN 8.9",
   .tensorflow = "2.15", .expect_cuda = "12.2.2", .expect_cudnn = "8.9.7.29"},  {.name = "tensorflow 2.12 is CUDA 11.8 + cuDNN 8.6", .source = "TF source.md: 2.12.0",
   .tensorflow = "2.12", .expect_cuda = "11.8.0", .expect_cudnn = "8.6.0.163"},  {.name = "tensorflow 2.15 with cuDNN 9 cannot fit", .source = "TF source.md: 2.15 tested with cuDNN 8.9",
   .cudnn = "9", .tensorflow = "2.15", .ok = false, .expect_suggestion = "--cudnn 8.9.7 would fit"},  {.name = "tensorflow 2.17 with driver 535 runs CUDA 12.3 in minor-compat", .source = "TF: 2.17 CUDA 12.3; RN131 12.3 >= 545.23.06",
   .driver = "535.104.05", .tensorflow = "2.17", .expect_cuda = "12.3.2", .expect_mode = "minor-compat"},  {.name = "torch 2.4 and tensorflow 2.15 cannot share a toolkit", .source = "PT_REL 2.4 (11.8/12.1/12.4); TF 2.15 (12.2)",
   .torch = "2.4", .tensorflow = "2.15", .ok = false, .expect_suggestion = "no single change"},
  {.name = "torch 2.4 and tensorflow 2.14 share CUDA 11.8 but not cuDNN", .source = "PT_REL 2.4 cu118 bundles cuDNN 9.1.0.70; TF 2.14 tested with cuDNN 8.7",
   .torch = "2.4", .tensorflow = "2.14", .ok = false, .expect_rejection = "no cuDNN release satisfies"},  {.name = "jax cuda12 with driver 535 gets full-support CUDA 12.2 and cuDNN >= 9.8", .source = "JAX installation: cuda12 needs CUDA >= 12.1, cuDNN >= 9.8",
   .driver = "535.104.05", .gpus = {"8.0"}, .jax = "12", .expect_cuda = "12.2.2", .expect_mode = "full"},  {.name = "jax cuda13 needs sm_75 or newer", .source = "JAX: CUDA 13 plugin needs SM 7.5+",
   .gpus = {"7.0"}, .jax = "13", .ok = false, .expect_suggestion = "--jax 12 would fit", .expect_rejection = "sm_70 (Volta) needs CUDA <= 12.9"},  {.name = "jax cuda13 needs driver branch 580", .source = "JAX: cuda13 min driver 580",
   .driver = "575.57.08", .jax = "13", .ok = false, .expect_suggestion = "upgrade the NVIDIA driver"},
  {.name = "torch 2.6 has no sm_120 build: the blocker first, the nearest torch as the fix", .source = "PT_REL 2.6: cu118/cu124/cu126, sm_120 first in 2.7 cu128",
   .driver = "575.51.03", .gpus = {"12.0"}, .torch = "2.6", .ok = false, .expect_suggestion = "--torch 2.7 would fit", .expect_rejection = "no build carries sm_120 code"},};

const Case misc_cases[] = {
  {.name = "gcc 13 is too new for CUDA 12.2", .source = "NIX_NVCC/SPACK: 12.2 gcc <= 12",
   .gcc = "13.2.0", .cuda = "12.2", .expect_warning = "install g++-12 (cudaenv then hands it to nvcc and CMake)"},  {.name = "gcc 12 is fine for CUDA 12.2", .source = "NIX_NVCC/SPACK: 12.2 gcc <= 12",
   .gcc = "12.3.0", .cuda = "12.2", .expect_no_warning = "install g++"},  {.name = "gcc 14 is fine for CUDA 12.8", .source = "NIX_NVCC: 12.8 gcc <= 14",
   .gcc = "14.2.0", .cuda = "12.8", .expect_no_warning = "install g++"},  {.name = "cuDNN 9.0.0 stops at CUDA 12.3", .source = "CUDNN_SM 9.0.0: CUDA 12.0-12.3",
   .cuda = "12.4", .cudnn = "9.0.0", .ok = false, .expect_suggestion = "--cudnn"},  {.name = "cuDNN 9.10.2 supports CUDA 12.9", .source = "CUDNN_SM 9.10.2: CUDA 12.0-12.9",
   .cuda = "12.9", .cudnn = "9.10.2", .expect_cudnn = "9.10.2.21"},  {.name = "cuDNN 8.9.6 only supports CUDA 12.0-12.2", .source = "CUDNN_SM 8.9.6",
   .cuda = "12.2", .cudnn = "8.9.6", .expect_cudnn = "8.9.6.50"},  {.name = "a range spec picks the newest release inside it", .source = "RN131 release list",
   .cuda = ">=12.1,<12.5", .expect_cuda = "12.4.1"},};

const Case pypi_fact_cases[] = {
  {.name = "cuDNN 9.19 has a CUDA 12 build", .source = "PYPI_CUDNN: nvidia-cudnn-cu12 and nvidia-cudnn-cu13 9.19.0.56",
   .cuda = "12.8", .cudnn = "9.19", .expect_cuda = "12.8.2", .expect_cudnn = "9.19.0.56"},
  {.name = "cuDNN 9.18 has a CUDA 13 build", .source = "PYPI_CUDNN: nvidia-cudnn-cu12 and nvidia-cudnn-cu13 9.18.1.3",
   .cuda = "13.0", .cudnn = "9.18", .expect_cuda = "13.0.3", .expect_cudnn = "9.18.1.3"},
  {.name = "cuDNN 9.15.1 has a CUDA 12 build", .source = "PYPI_CUDNN: nvidia-cudnn-cu12 and nvidia-cudnn-cu13 9.15.1.9",
   .cuda = "12.9", .cudnn = "9.15.1", .expect_cudnn = "9.15.1.9"},
  {.name = "torch 2.11 gets the cuDNN its PyPI wheel pins", .source = "PYPI_TORCH: torch 2.11.0 requires cuda-toolkit 13.0.2, nvidia-cudnn-cu13 9.19.0.56",
   .torch = "2.11", .expect_cuda = "13.0.3", .expect_cudnn = "9.19.0.56", .expect_variant = "cu130"},
  {.name = "cuDNN 9.28.1 is known, for CUDA 13", .source = "PYPI_CUDNN: nvidia-cudnn-cu13 9.28.1.4 (no cu12 wheel)",
   .cudnn = "9.28.1", .expect_cudnn = "9.28.1.4"},
  {.name = "cuDNN 9.28.1 has no CUDA 12 build", .source = "PYPI_CUDNN: nvidia-cudnn-cu12 stops at 9.28.0.42",
   .cuda = "12", .cudnn = "9.28.1", .ok = false, .expect_suggestion = "--cuda 13"},
  {.name = "cuDNN 9.28.0 has a CUDA 12 build", .source = "PYPI_CUDNN: nvidia-cudnn-cu12 and nvidia-cudnn-cu13 9.28.0.42",
   .cuda = "12.9", .cudnn = "9.28.0", .expect_cudnn = "9.28.0.42"},
  {.name = "the point releases between 9.15 and 9.26 are known", .source = "PYPI_CUDNN: 9.23.2.1 for cu12 and cu13",
   .cuda = "12.9", .cudnn = "9.23.2", .expect_cudnn = "9.23.2.1"},};
// clang-format on

}  // namespace

TEST_CASE("drivers against toolkits") {
  for (const auto& c : driver_cases) check_case(c);
}

TEST_CASE("GPU architectures against toolkits") {
  for (const auto& c : arch_cases) check_case(c);
}

TEST_CASE("framework builds: toolkit, cuDNN and compiled architectures") {
  for (const auto& c : framework_cases) check_case(c);
}

TEST_CASE("host compilers, cuDNN support and specs") {
  for (const auto& c : misc_cases) check_case(c);
}

TEST_CASE("cuDNN CUDA builds and torch pins as NVIDIA's and PyTorch's PyPI wheels state them") {
  for (const auto& c : pypi_fact_cases) check_case(c);
}

TEST_CASE("driver floors from NVIDIA's table are not reported as unverified") {
  // RN133 Table 3: 13.1 Update 1 >= 590.48.01, 13.2 Update 2 >= 595.71.05, 13.3 Update 1 >=
  // 610.43.02. Only the 13.1.2 refresh, which has no row of its own, is still inferred.
  for (const auto& row : {std::pair{"590.48.01", "13.1.1"}, std::pair{"595.71.05", "13.2"},
                          std::pair{"610.43.02", "13.3"}}) {
    const char* driver = row.first;
    const char* cuda = row.second;
    CAPTURE(driver);
    Request request;
    request.cuda = spec(cuda);
    const auto r = resolve::resolve(db(), Target{v(driver), {}, std::nullopt}, request);
    REQUIRE(r.ok());
    CHECK(r.best().driver.mode == DriverMode::full);
    CHECK(r.best().unconfirmed.empty());
  }
  for (const auto* driver : {"595.71.05", "610.43.02"}) {
    CAPTURE(driver);
    const auto r = resolve::resolve(db(), Target{v(driver), {}, std::nullopt}, Request{});
    REQUIRE(r.ok());
    CHECK(r.best().unconfirmed.empty());
  }
  const auto refresh = resolve::resolve(db(), Target{v("590.48.01"), {}, std::nullopt}, Request{});
  REQUIRE(refresh.ok());
  CHECK(refresh.best().cuda->version.str() == "13.1.2");
  REQUIRE(refresh.best().unconfirmed.size() == 1);
  CHECK(refresh.best().unconfirmed.front().basis.find("not read") == std::string::npos);
  CHECK(refresh.best().unconfirmed.front().basis.find("13.1 Update 1") != std::string::npos);
}

TEST_CASE("a GPU is covered by machine code of its major with a lower minor, or by older PTX") {
  manifest::PytorchVariant variant;
  variant.sass = std::vector<Version>{*Version::parse("8.0"), *Version::parse("8.6")};
  variant.ptx = {*Version::parse("9.0")};
  CHECK(pytorch_coverage(variant, *Version::parse("8.9")) ==
        Coverage::native);  // sm_86 code runs on 8.9
  CHECK(pytorch_coverage(variant, *Version::parse("9.0")) == Coverage::ptx_jit);
  CHECK(pytorch_coverage(variant, *Version::parse("10.0")) == Coverage::ptx_jit);
  CHECK(pytorch_coverage(variant, *Version::parse("7.5")) == Coverage::none);
  variant.sass.reset();
  CHECK(pytorch_coverage(variant, *Version::parse("8.0")) == Coverage::unknown);
}

TEST_CASE("versions the database does not know are reported") {
  Request request;
  request.torch = VersionSpec::parse("3.0").value();
  request.cuda = VersionSpec::parse("14.1").value();
  const auto unknown = unknown_versions(db(), request);
  CHECK(unknown.size() == 2);
  request = Request{};
  request.torch = VersionSpec::parse("2.4.1").value();
  CHECK(unknown_versions(db(), request).empty());
}

TEST_CASE("every candidate that fell says why") {
  Target target;
  target.driver = Version::parse("470.82.01");
  Request request;
  request.cuda = VersionSpec::parse("12").value();
  const auto r = resolve::resolve(db(), target, request);
  REQUIRE_FALSE(r.ok());
  size_t twelve = 0;
  for (const auto& release : db().cuda_releases) twelve += release.version.major() == 12;
  CHECK(r.rejected.size() == twelve);
  for (const auto& rejection : r.rejected) CHECK(rejection.reason.find("needs driver >=") == 0);
}

TEST_CASE("a release with an unknown driver floor is offered only when asked for, marked") {
  // MAN: 13.4.x bundles no Linux driver and no source read gives its floor; nor does any for
  // 13.5.0 (PYPI_CTK).
  Request request;
  const auto plain = resolve::resolve(db(), Target{}, request);
  REQUIRE(plain.ok());
  CHECK_FALSE(plain.best().unchecked);
  CHECK(plain.best().cuda->version < *Version::parse("13.4"));
  CHECK(std::find(plain.unchecked_skipped.begin(), plain.unchecked_skipped.end(), "13.4.2") !=
        plain.unchecked_skipped.end());
  CHECK(std::find(plain.unchecked_skipped.begin(), plain.unchecked_skipped.end(), "13.5.0") !=
        plain.unchecked_skipped.end());

  request.include_unchecked = true;
  const auto asked = resolve::resolve(db(), Target{}, request);
  REQUIRE(asked.ok());
  CHECK(asked.best().cuda->version.str() == "13.5.0");
  CHECK(asked.best().unchecked);
  CHECK(any_contains(asked.best().warnings, "is unchecked"));

  // With a driver, an unchecked release has no minimum to meet: never "full", so a release
  // with a known floor that the driver meets is preferred.
  const auto driven = resolve::resolve(db(), Target{v("610.43.02"), {}, std::nullopt}, request);
  REQUIRE(driven.ok());
  CHECK(driven.best().cuda->version.str() == "13.3.1");
  const auto it = std::find_if(driven.solutions.begin(), driven.solutions.end(),
                               [](const Solution& s) { return s.unchecked; });
  REQUIRE(it != driven.solutions.end());
  CHECK(it->driver.mode == DriverMode::minor_compat);
}

TEST_CASE("an answer names the inferred facts it rests on, with their basis") {
  // MAN: 13.0.3 ships 13.0.2's nvcc and cudart; RN131: 13.0 Update 2 >= 580.95.05.
  Request request;
  request.cuda = spec("13.0.3");
  const auto inferred = resolve::resolve(db(), Target{v("580.95.05"), {}, std::nullopt}, request);
  REQUIRE(inferred.ok());
  CHECK(inferred.best().driver.mode == DriverMode::full);
  REQUIRE(inferred.best().unconfirmed.size() == 1);
  const auto& fact = inferred.best().unconfirmed.front();
  CHECK(fact.fact == "CUDA 13.0.3 driver floor 580.95.05");
  CHECK(fact.confidence == "inferred");
  CHECK(fact.basis.find("13.0.2") != std::string::npos);

  request.cuda = spec("12.4.1");  // RN131 Table 3: a primary source
  const auto sourced = resolve::resolve(db(), Target{v("550.54.15"), {}, std::nullopt}, request);
  REQUIRE(sourced.ok());
  CHECK(sourced.best().unconfirmed.empty());
}
