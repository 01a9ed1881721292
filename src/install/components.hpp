#pragma once
// Which archives of a release to install, and for which platform.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/sysroot.hpp"
#include "manifest/redist.hpp"

namespace cudaenv::install {

// "linux-x86_64", "linux-sbsa" (Arm servers) or "linux-aarch64" (Jetson), from the machine.
Result<std::string> detect_platform(const Sysroot& sysroot);

struct SelectedArchive {
  std::string component;  // "cuda_nvcc"
  std::string version;    // the component's own version
  manifest::RedistFile file;
  // Where it is fetched from, when not <mirror>/<product>/redist/<relative_path> (an index's
  // wheel URL).
  std::string url = {};
};

// preset: "minimal" (compiler, runtime, headers, and nvvm/crt where shipped apart), "full" (every
// toolkit component for the platform, without driver-side packages), or a comma-separated list.
// An unknown component in a list is a usage error naming the ones the release has.
Result<std::vector<SelectedArchive>> select_cuda_components(
    const manifest::RedistManifest& manifest, const std::string& preset,
    const std::string& platform);

// Every cuDNN component for the platform and CUDA major ("cuda12").
Result<std::vector<SelectedArchive>> select_cudnn_components(
    const manifest::RedistManifest& manifest, const std::string& platform,
    const std::string& variant);

// Every cuDNN archive for the platform, whatever CUDA variant it is built for: what a mirror
// serves, since the toolkits of the machines it serves may span CUDA majors. not_found when the
// release has none for the platform.
Result<std::vector<SelectedArchive>> select_cudnn_all_variants(
    const manifest::RedistManifest& manifest, const std::string& platform);

}  // namespace cudaenv::install
