#pragma once
// Framework builds as the solver sees them: each fixes or bounds the toolkit and cuDNN.

#include <optional>
#include <string>
#include <vector>

#include "manifest/database.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::resolve {

struct FrameworkBuild {
  FrameworkChoice choice;
  std::optional<Version> cuda_major_minor;  // PyTorch and TensorFlow fix it
  std::optional<VersionSpec> cuda_range;    // JAX bounds it
  std::optional<Version> cudnn_exact;       // PyTorch bundles one cuDNN build
  std::optional<Version> cudnn_series;      // TensorFlow's tested cuDNN major.minor
  std::optional<VersionSpec> cudnn_range;   // JAX
  const manifest::PytorchVariant* torch_variant = nullptr;
  const manifest::Provenance* provenance = nullptr;  // the release's (series', plugin's) record
  std::optional<Version> min_compute_capability;
  int min_driver_branch = 0;
  bool experimental = false;
};

// Every build of each requested framework whose version matches the request, newest first;
// one list per requested framework.
std::vector<std::vector<FrameworkBuild>> requested_builds(const manifest::Database& db,
                                                          const Request& request);

}  // namespace cudaenv::resolve
