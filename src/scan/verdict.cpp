#include "scan/verdict.hpp"

#include <algorithm>
#include <array>

#include "core/text.hpp"

namespace cudaenv::scan {

namespace {

struct PtxRelease {
  int cuda_major, cuda_minor;
  PtxIsa isa;
};

// CUDA release → the PTX ISA version its compiler writes and its driver reads (PTX ISA
// reference, section "Release Notes": ISA 7.0 came with CUDA 11.0 … 9.0 with CUDA 13.0).
constexpr std::array<PtxRelease, 21> ptx_releases{{
    {11, 0, {7, 0}}, {11, 1, {7, 1}}, {11, 2, {7, 2}}, {11, 3, {7, 3}}, {11, 4, {7, 4}},
    {11, 5, {7, 5}}, {11, 6, {7, 6}}, {11, 7, {7, 7}}, {11, 8, {7, 8}}, {12, 0, {8, 0}},
    {12, 1, {8, 1}}, {12, 2, {8, 2}}, {12, 3, {8, 3}}, {12, 4, {8, 4}}, {12, 5, {8, 5}},
    {12, 6, {8, 5}}, {12, 8, {8, 7}}, {12, 9, {8, 8}}, {13, 0, {9, 0}}, {13, 1, {9, 1}},
    {13, 2, {9, 2}},
}};

bool runs_natively(int sass, int gpu) { return sass / 10 == gpu / 10 && sass % 10 <= gpu % 10; }

std::string isa_text(PtxIsa isa) {
  return std::to_string(isa.major) + "." + std::to_string(isa.minor);
}

}  // namespace

const char* to_string(Coverage coverage) {
  switch (coverage) {
    case Coverage::native: return "native";
    case Coverage::jit: return "jit";
    case Coverage::no_kernels: return "no kernels";
    case Coverage::none: break;
  }
  return "none";
}

std::optional<PtxIsa> ptx_isa_for_driver_cuda(const Version& cuda) {
  const auto& newest = ptx_releases.back();
  if (cuda.major() > newest.cuda_major ||
      (cuda.major() == newest.cuda_major && cuda.minor() > newest.cuda_minor))
    return std::nullopt;
  std::optional<PtxIsa> limit;
  for (const auto& release : ptx_releases) {
    if (release.cuda_major < cuda.major() ||
        (release.cuda_major == cuda.major() && release.cuda_minor <= cuda.minor()))
      limit = release.isa;
  }
  return limit ? limit : PtxIsa{6, 0};  // drivers older than CUDA 11: below every ISA 7 PTX
}

Verdict verdict_for(const std::vector<GpuCode>& codes, int arch,
                    std::optional<PtxIsa> driver_limit) {
  const GpuCode* too_new = nullptr;
  const GpuCode* jit = nullptr;
  if (!codes.empty() &&
      std::all_of(codes.begin(), codes.end(), [](const GpuCode& code) { return code.no_kernels; }))
    return {Coverage::no_kernels, "", "its GPU code defines no kernels: nothing runs on the GPU"};
  for (const auto& code : codes) {
    if (code.no_kernels) continue;
    if (code.kind == CodeKind::sass && runs_natively(code.arch, arch))
      return {Coverage::native, describe(code), ""};
    if (code.kind != CodeKind::ptx || code.arch > arch) continue;
    if (driver_limit && PtxIsa{code.ptx_major, code.ptx_minor} > *driver_limit)
      too_new = &code;
    else if (!jit || code.arch > jit->arch)
      jit = &code;  // the driver compiles the newest PTX it can
  }
  if (jit) return {Coverage::jit, describe(*jit), ""};
  if (too_new)
    return {Coverage::none, "",
            "its PTX is ISA " + isa_text({too_new->ptx_major, too_new->ptx_minor}) +
                ", newer than this driver compiles (" + isa_text(*driver_limit) + ")"};
  return {Coverage::none, "", "no " + sm_name(arch) + " SASS and no PTX at or below it"};
}

std::optional<int> parse_arch(std::string_view text) {
  auto value = std::string(text::trim(text));
  for (const char* prefix : {"sm_", "compute_"}) {
    if (text::starts_with(value, prefix)) value = value.substr(std::string_view(prefix).size());
  }
  if (const auto dot = value.find('.'); dot != std::string::npos) {
    const auto major = text::parse_integer(value.substr(0, dot));
    const auto minor = text::parse_integer(value.substr(dot + 1));
    if (!major || !minor || *major < 1 || *major > 99 || *minor < 0 || *minor > 9)
      return std::nullopt;
    return static_cast<int>(*major * 10 + *minor);
  }
  const auto whole = text::parse_integer(value);
  if (!whole || *whole < 10 || *whole > 999) return std::nullopt;
  return static_cast<int>(*whole);
}

std::string sm_name(int arch) { return "sm_" + std::to_string(arch); }

}  // namespace cudaenv::scan
