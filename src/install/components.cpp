#include "install/components.hpp"

#include <algorithm>
#include <set>

#include "core/text.hpp"

namespace cudaenv::install {

namespace {

// What it takes to compile and run a CUDA C++ program. cuda_crt and libnvvm are shipped apart
// from cuda_nvcc from CUDA 13 on; older releases simply lack them.
const std::vector<std::string> minimal_components = {"cuda_nvcc", "cuda_cudart", "cuda_cccl",
                                                     "cuda_crt",  "libnvvm",     "cuda_culibos"};

// Packages that share the manifest without being part of a toolkit: the display driver and
// system services (fabric manager, IMEX, NSCQ, GPUDirect Storage kernel side, Mellanox tools),
// the forward-compatibility driver libraries, and Windows-only integrations.
bool is_driver_side(const std::string& key) {
  static const std::set<std::string> excluded = {"nvidia_driver",
                                                 "fabricmanager",
                                                 "imex",
                                                 "libnvidia_nscq",
                                                 "nvidia_fs",
                                                 "nvlsm",
                                                 "collectx_bringup",
                                                 "driver_assistant",
                                                 "cuda_compat",
                                                 "cuda_compat_orin",
                                                 "visual_studio_integration",
                                                 "nsight_vse"};
  return excluded.count(key) > 0 || text::starts_with(key, "mft");
}

SelectedArchive selected(const manifest::RedistComponent& component,
                         const manifest::RedistFile& file) {
  return {component.key, component.version ? component.version->str() : "", file};
}

std::string known_components(const manifest::RedistManifest& manifest,
                             const std::string& platform) {
  std::vector<std::string> keys;
  for (const auto& c : manifest.components) {
    if (manifest::redist_file(c, platform) && !is_driver_side(c.key)) keys.push_back(c.key);
  }
  return text::join(keys, ",");
}

}  // namespace

Result<std::string> detect_platform(const Sysroot& sysroot) {
  const auto arch =
      std::string(text::trim(sysroot.read_file("/proc/sys/kernel/arch").value_or("x86_64")));
  if (arch == "x86_64") return std::string("linux-x86_64");
  if (arch == "aarch64") {
    // Jetson boards carry the Tegra release file; Arm servers (Grace and others) use sbsa builds.
    return std::string(sysroot.exists("/etc/nv_tegra_release") ? "linux-aarch64" : "linux-sbsa");
  }
  return make_error(ErrorKind::failure, "unsupported platform: " + arch,
                    "NVIDIA publishes Linux toolkits for x86_64 and aarch64 only");
}

Result<std::vector<SelectedArchive>> select_cuda_components(
    const manifest::RedistManifest& manifest, const std::string& preset,
    const std::string& platform) {
  std::vector<SelectedArchive> archives;
  if (preset == "full") {
    for (const auto& component : manifest.components) {
      const auto* file = manifest::redist_file(component, platform);
      if (file != nullptr && !is_driver_side(component.key))
        archives.push_back(selected(component, *file));
    }
  } else {
    const bool minimal = preset == "minimal";
    const auto wanted = minimal ? minimal_components : text::split(preset, ',');
    for (const auto& key : wanted) {
      const auto* component = manifest.component(std::string(text::trim(key)));
      const auto* file =
          component != nullptr ? manifest::redist_file(*component, platform) : nullptr;
      if (file != nullptr) {
        archives.push_back(selected(*component, *file));
      } else if (!minimal) {
        return make_error(ErrorKind::usage,
                          "--components: \"" + key + "\" is not in this release for " + platform,
                          "components: " + known_components(manifest, platform));
      }
    }
  }
  if (archives.empty()) {
    return make_error(ErrorKind::not_found, "this release has no archives for " + platform);
  }
  return archives;
}

Result<std::vector<SelectedArchive>> select_cudnn_components(
    const manifest::RedistManifest& manifest, const std::string& platform,
    const std::string& variant) {
  std::vector<SelectedArchive> archives;
  for (const auto& component : manifest.components) {
    const auto* file = manifest::redist_file(component, platform, variant);
    if (file == nullptr)
      file = manifest::redist_file(component, platform);  // single-variant manifests
    if (file != nullptr) archives.push_back(selected(component, *file));
  }
  if (archives.empty()) {
    return make_error(ErrorKind::not_found,
                      "this cuDNN release has no " + variant + " build for " + platform);
  }
  return archives;
}

Result<std::vector<SelectedArchive>> select_cudnn_all_variants(
    const manifest::RedistManifest& manifest, const std::string& platform) {
  std::vector<SelectedArchive> archives;
  for (const auto& component : manifest.components) {
    for (const auto& [key, file] : component.files) {
      if (key == platform || text::starts_with(key, platform + "/"))
        archives.push_back(selected(component, file));
    }
  }
  if (archives.empty()) {
    return make_error(ErrorKind::not_found, "this cuDNN release has no builds for " + platform);
  }
  return archives;
}

}  // namespace cudaenv::install
