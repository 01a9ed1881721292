#include "scan/fixes.hpp"

#include <filesystem>

#include "core/text.hpp"

namespace cudaenv::scan {

namespace {

std::string capability(int arch) {
  return std::to_string(arch / 10) + "." + std::to_string(arch % 10);
}

}  // namespace

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

std::string fix_for(const std::string& path, int arch, const Verdict& verdict) {
  if (verdict.coverage != Coverage::none) return "";
  if (text::contains(verdict.reason, "newer than this driver")) {
    return "update the NVIDIA driver to one that supports the CUDA release this PTX came from, "
           "or install a build with " +
           sm_name(arch) + " SASS";
  }
  const auto package = package_of(path);
  if (package == "torch" || text::starts_with(package, "torch-") || package == "torchvision" ||
      package == "torchaudio") {
    return "install a PyTorch build that includes " + sm_name(arch) +
           " (a newer release, or the wheel index of a newer CUDA: pip install torch "
           "--index-url https://download.pytorch.org/whl/cu130); a source build: "
           "TORCH_CUDA_ARCH_LIST=\"" +
           capability(arch) + "\"";
  }
  const auto name = package.empty() ? std::string("this binary") : package;
  return "rebuild " + name + " with " + sm_name(arch) + " (TORCH_CUDA_ARCH_LIST=\"" +
         capability(arch) + "\" for a PyTorch extension, nvcc -gencode arch=compute_" +
         std::to_string(arch) + ",code=sm_" + std::to_string(arch) +
         " otherwise) or install a release built for it";
}

}  // namespace cudaenv::scan
