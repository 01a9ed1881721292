#include "scan/fixes.hpp"

#include <filesystem>

#include "core/text.hpp"
#include "scan/copies.hpp"

namespace cudaenv::scan {

namespace {

std::string capability(int arch) {
  return std::to_string(arch / 10) + "." + std::to_string(arch % 10);
}

bool carries_natively(const manifest::PytorchVariant& variant, int arch) {
  if (!variant.sass) return false;
  for (const auto& sass : *variant.sass) {
    const int code = static_cast<int>(sass.major() * 10 + sass.minor());
    if (code / 10 == arch / 10 && code % 10 <= arch % 10) return true;
  }
  return false;
}

bool compiles_for(const manifest::GpuArch& known, const Version& cuda) {
  return cuda.major_minor() >= known.first_cuda.major_minor() &&
         (!known.last_cuda || cuda.major_minor() <= known.last_cuda->major_minor());
}

// The driver runs wheels of its own CUDA and older, and newer minors of the same major above
// the family's minor-version compatibility floor.
bool driver_runs(const manifest::Database& db, const DriverLimit& driver, const Version& cuda) {
  if (!driver.cuda) return true;
  if (cuda.major_minor() <= driver.cuda->major_minor()) return true;
  const auto* family = db.family(static_cast<int>(cuda.major()));
  return cuda.major() == driver.cuda->major() && family && driver.version &&
         *driver.version >= family->minor_compat_floor;
}

std::string torch_advice(int arch, const FixFacts& facts) {
  const auto wheel = facts.db ? torch_wheel_for(*facts.db, arch, facts.driver) : std::nullopt;
  std::string build = "a source build: TORCH_CUDA_ARCH_LIST=\"" + capability(arch) + "\"";
  if (!wheel)
    return "no PyTorch wheel the database knows carries " + sm_name(arch) +
           (facts.driver.cuda ? " for this driver (CUDA " + facts.driver.cuda->str() + ")" : "") +
           "; " + build;
  return "install a PyTorch build that includes " + sm_name(arch) + " (torch " + wheel->release +
         " " + wheel->tag + ": pip install torch --index-url " + wheel->index_url + "); " + build;
}

}  // namespace

std::optional<TorchWheel> torch_wheel_for(const manifest::Database& db, int arch,
                                          const DriverLimit& driver) {
  const auto cc = Version::parse(capability(arch));
  const auto* known = cc ? db.arch(*cc) : nullptr;
  for (auto release = db.pytorch.rbegin(); release != db.pytorch.rend(); ++release) {
    const manifest::PytorchVariant* best = nullptr;
    for (const auto& variant : release->variants) {
      if (variant.experimental || !carries_natively(variant, arch)) continue;
      if (known && !compiles_for(*known, variant.cuda)) continue;
      if (!driver_runs(db, driver, variant.cuda)) continue;
      if (!best || variant.cuda > best->cuda) best = &variant;
    }
    if (!best) continue;
    auto url = release->index_url;
    if (const auto at = url.find("{tag}"); at != std::string::npos) url.replace(at, 5, best->tag);
    return TorchWheel{release->version.str(), best->tag, url};
  }
  return std::nullopt;
}

std::string package_of(const std::string& path) {
  bool below_site = false;
  for (const auto& part : std::filesystem::path(path)) {
    if (below_site) return part.string();
    below_site = part == "site-packages" || part == "dist-packages";
  }
  return "";
}

std::string cuda_for_ptx_isa(int major, int minor) {
  for (int cuda_major = 11; cuda_major <= 13; ++cuda_major) {
    for (int cuda_minor = 0; cuda_minor <= 9; ++cuda_minor) {
      const auto limit = ptx_isa_for_driver_cuda(
          *Version::parse(std::to_string(cuda_major) + "." + std::to_string(cuda_minor)));
      if (limit && *limit >= PtxIsa{major, minor})
        return std::to_string(cuda_major) + "." + std::to_string(cuda_minor);
    }
  }
  return "";
}

std::string fix_for(const std::string& path, int arch, const Verdict& verdict,
                    const FixFacts& facts) {
  if (verdict.coverage != Coverage::none) return "";
  if (text::contains(verdict.reason, "newer than this driver")) {
    return "update the NVIDIA driver to one that supports the CUDA release this PTX came from, "
           "or install a build with " +
           sm_name(arch) + " SASS";
  }
  const auto package = package_of(path);
  if (package == "torch" || text::starts_with(package, "torch-") || package == "torchvision" ||
      package == "torchaudio")
    return torch_advice(arch, facts);
  const auto wheel = pip_distribution_of(path);
  const auto name = wheel ? wheel->project : package.empty() ? std::string("this binary") : package;
  return "rebuild " + name + " with " + sm_name(arch) + " (TORCH_CUDA_ARCH_LIST=\"" +
         capability(arch) + "\" for a PyTorch extension, nvcc -gencode arch=compute_" +
         std::to_string(arch) + ",code=sm_" + std::to_string(arch) +
         " otherwise) or install a release built for it";
}

}  // namespace cudaenv::scan
