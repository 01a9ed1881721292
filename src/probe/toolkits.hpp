#pragma once
// CUDA toolkits already on the machine: /usr/local/cuda-*, the /usr/local/cuda link (often an
// update-alternatives chain), /opt/cuda, $CUDA_HOME, nvcc on PATH, and cudaenv's own store.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/facts.hpp"

namespace cudaenv::probe {

struct ToolkitSearch {
  const Sysroot& sysroot;
  ProcessRunner& runner;
  const Environment& env;
  std::filesystem::path data_root;  // cudaenv's own root: a host path, not below the sysroot
  std::vector<std::filesystem::path> shared_roots = {};  // system stores (docs/cluster.md)
};

// Every toolkit found, each once (however many ways lead to it), newest first.
std::vector<ToolkitFacts> probe_toolkits(const ToolkitSearch& search);

// Where NVIDIA's installers put toolkits: /usr/local/cuda-X.Y (each one there, sorted by
// name), and /opt/cuda (Arch's package).
std::vector<std::string> versioned_prefixes(const Sysroot& sysroot);
inline constexpr const char* opt_cuda_prefix = "/opt/cuda";
// NVIDIA's default link, and where Debian's nvidia-cuda-toolkit puts the real nvcc (its prefix
// counts as /usr).
inline constexpr const char* default_link_prefix = "/usr/local/cuda";
inline constexpr const char* distro_nvcc_dir = "/usr/lib/nvidia-cuda-toolkit/bin";

// Where /usr/local/cuda points, hop by hop; nullopt when there is no such link or directory.
std::optional<DefaultLinkFacts> probe_default_link(const Sysroot& sysroot);

struct ToolkitVersion {
  std::optional<Version> release;  // "12.4.1": only version.json/version.txt record it
  std::optional<Version> nvcc;     // "12.4.131"
  std::optional<Version> cudart;   // "12.4.127"
  std::string source;
  bool from_wheels = false;
};

// Installed Debian/Ubuntu packages and their versions, from /var/lib/dpkg/status.
using DpkgPackages = std::map<std::string, std::string>;
DpkgPackages parse_dpkg_status(std::string_view status);

// Reads a prefix's version from version.json, version.txt, the apt packages that installed a
// /usr/local/cuda-X.Y prefix (NVIDIA's .deb packages ship no version.json), the pip wheels'
// dist-info, or `nvcc --version`, in that order. nullopt when the prefix is not a toolkit.
std::optional<ToolkitVersion> read_toolkit_version(const Sysroot& sysroot, ProcessRunner& runner,
                                                   const std::string& prefix,
                                                   const DpkgPackages& packages = {});

// "Cuda compilation tools, release 13.0, V13.0.88" -> 13.0.88.
std::optional<Version> parse_nvcc_version_output(std::string_view output);
// version.json's "cuda", "cuda_nvcc" and "cuda_cudart" entries.
ToolkitVersion parse_version_json(std::string_view json);
// "CUDA Version 11.0.228" (toolkits up to 11.0).
std::optional<Version> parse_version_txt(std::string_view text);

}  // namespace cudaenv::probe
