#pragma once
// `cudaenv compat install X.Y`: NVIDIA's forward-compatibility package (cuda-compat-X-Y) from an
// apt repository of NVIDIA's layout (or a mirror of one). The repository's Packages index names
// the .deb and its sha256; the .deb is downloaded into the cache, checked, and the files of its
// usr/local/cuda-X.Y/compat/ unpacked with libarchive into <data root>/compat/X.Y/lib. The
// library's own note must name X.Y, or nothing is installed. The GPU models it may be used on
// (data-center ones, checked by the caller against the database) are written beside it: the
// hook puts it first only on those (here::ForwardCompat).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "fetch/http.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

// One stanza of a Packages index.
struct AptPackage {
  std::string name;
  std::string version;   // the Debian version: "570.124.06-0ubuntu1"
  std::string filename;  // below the repository: "./cuda-compat-12-8_570.124.06-0ubuntu1_amd64.deb"
  std::string sha256;
  std::uint64_t size = 0;
};

// The newest stanza of `name` in a Packages index's text; its Filename, SHA256 and Size checked
// (core/untrusted.hpp). ErrorKind::not_found when the index has no such package; `origin` names
// the index in errors.
Result<AptPackage> find_apt_package(std::string_view packages, const std::string& name,
                                    const std::string& origin);

// cuda-compat-12-8 for 12.8.
std::string compat_package_name(const Version& cuda);

// NVIDIA's repository for this machine: https://developer.download.nvidia.com/compute/cuda/repos/
// <distro><version without dots>/<x86_64|sbsa>/ ("ubuntu2404", "debian12").
std::string default_compat_repository(const std::string& os_id, const std::string& os_version,
                                      const std::string& machine);

struct CompatInstall {
  Version cuda;                   // 12.8
  std::string repository;         // the apt repository's URL, ending in '/'
  std::vector<std::string> gpus;  // the GPU models (as the kernel names them) it may run on
  fetch::FetchOptions fetch;
};

struct InstalledCompat {
  std::filesystem::path prefix;  // <data root>/compat/12.8
  AptPackage package;
  std::string library_version;  // libcuda.so.<this>
};

// Errors: ErrorKind::network for the repository; not_found for a package it lacks; integrity for
// a sha256 that differs, an unsafe .deb or a library whose note is missing or names another CUDA
// (exit 6). Nothing is left in the store on failure; an earlier install of X.Y stays until the new
// one is complete.
Result<InstalledCompat> install_compat(const Store& store, const CompatInstall& request);

// <store root>/compat/<X.Y>.
std::filesystem::path compat_prefix(const Store& store, const Version& cuda);

}  // namespace cudaenv::install
