#pragma once
// Planning an install from a PyPI-compatible index (PyPI itself, a corporate proxy, devpi)
// instead of NVIDIA's redist mirror. A CUDA release maps to its component wheels through NVIDIA's
// `cuda-toolkit` metapackage of the same version, whose METADATA pins every component wheel
// (see install/wheels.hpp); cuDNN comes from nvidia-cudnn-cu<major>. The plans are ordinary
// InstallPlans (source "pypi"): the installer fetches, verifies and lays the wheels out as it
// does redist archives.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "fetch/http.hpp"
#include "install/installer.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

struct IndexSource {
  std::string index;  // "https://pypi.org/simple", no trailing slash
  Store store;
  fetch::FetchOptions fetch;
};

struct PypiToolkitRequest {
  std::string spec;
  std::string components = "full";  // minimal, full or a comma-separated list
  // CUDA 11.x/12.x: NVIDIA's nvidia-cuda-nvcc-cu11/-cu12 wheels carry ptxas but no nvcc, so the
  // prefix cannot compile; installed only when asked for.
  bool runtime_only = false;
};

struct PypiToolkitPlan {
  InstallPlan install;
  // Toolkit components a "full" install leaves out because the metapackage pins no wheel for
  // them (cuda-gdb, Nsight, …), for the command to name.
  std::vector<std::string> without_wheels;
  // Pinned components whose project publishes wheels for other platforms only (nvidia-cudla,
  // aarch64 alone), left out on this one.
  std::vector<std::string> other_platforms_only;
  bool runtime_only = false;  // the release's wheels bring no nvcc
  // The index has no cuda-toolkit project (a partial proxy, a devpi allow-list): the component
  // versions came from the database's redist row of the release instead of its METADATA.
  bool from_database = false;
  // With from_database, a "full" install's components whose wheel project the index does not
  // carry at all, left out and named.
  std::vector<std::string> not_on_index = {};
};

// The newest cuda-toolkit release on the index matching `request.spec`, its pinned wheels for
// `platform`, the prefix <store>/toolkits/<version>. Usage error for a CUDA 11/12 release without
// runtime_only, naming --runtime-only and --source redist. An index without the cuda-toolkit
// project falls back to the newest release matching the spec whose component versions the
// database's redist rows give (from_database); not_found when it gives none.
Result<PypiToolkitPlan> plan_pypi_toolkit(const PypiToolkitRequest& request,
                                          const IndexSource& source, const std::string& platform);

// The newest nvidia-cudnn-cu<major> wheel matching `spec_text`, into
// <store>/cudnn/<major.minor.patch>-cuda<major>.
Result<InstallPlan> plan_pypi_cudnn(const std::string& spec_text, int cuda_major,
                                    const IndexSource& source, const std::string& platform);

// The releases the index offers, newest first: CUDA releases by their cuda-toolkit metapackage
// (13.0.3.0 named 13.0.3), cuDNN releases by their nvidia-cudnn-cu11/12/13 wheels, named by three
// components as the store names them. An index without cuda-toolkit (a partial proxy): the
// releases whose cudart wheel, at the version the database's redist row gives, the index lists
// (`from_database` then set, when given). not_found when the index has none.
Result<std::vector<Version>> list_index_versions(const IndexSource& source,
                                                 const std::string& product,
                                                 const std::string& platform,
                                                 bool* from_database = nullptr);

}  // namespace cudaenv::install
