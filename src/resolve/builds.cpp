#include "resolve/builds.hpp"

#include <algorithm>

#include "core/reversed.hpp"
#include "resolve/pip_lines.hpp"

namespace cudaenv::resolve {

namespace {

// The choice with its pip arguments and the pip line made of them.
FrameworkChoice choice(std::string name, std::string version, std::string variant,
                       std::vector<std::string> pip_args, Version rank) {
  FrameworkChoice made;
  made.install = pip_command(pip_args, PipTool::pip);
  made.name = std::move(name);
  made.version = std::move(version);
  made.variant = std::move(variant);
  made.pip_args = std::move(pip_args);
  made.rank = std::move(rank);
  return made;
}

std::vector<FrameworkBuild> torch_builds(const manifest::Database& db, const VersionSpec& spec) {
  std::vector<FrameworkBuild> builds;
  for (const auto& release : reversed(db.pytorch)) {
    if (!spec.matches_series(release.version)) continue;
    const auto shown =
        spec.is_exact_beyond(release.version.size()) ? spec.str() : release.version.str();
    for (const auto& variant : release.variants) {
      FrameworkBuild build;
      build.choice = choice("torch", shown, variant.tag, torch_pip_args(release, variant, spec),
                            release.version);
      build.cuda_major_minor = variant.cuda;
      build.cudnn_exact = variant.cudnn;
      build.torch_variant = &variant;
      build.provenance = &release.provenance;
      build.experimental = variant.experimental;
      build.choice.stable = !variant.experimental;
      build.choice.pypi_default = variant.tag == release.pypi_default;
      builds.push_back(std::move(build));
    }
  }
  return builds;
}

std::vector<FrameworkBuild> tensorflow_builds(const manifest::Database& db,
                                              const VersionSpec& spec) {
  std::vector<FrameworkBuild> builds;
  for (const auto& release : reversed(db.tensorflow)) {
    if (!spec.matches_series(release.version) && !spec.matches(release.version)) continue;
    // tensorflow[and-cuda] (2.14+) pulls the CUDA libraries from pip; older builds need them
    // installed.
    const bool and_cuda = release.version >= *Version::parse("2.14");
    FrameworkBuild build;
    build.choice = choice(
        "tensorflow", release.version.str(), "",
        {std::string("tensorflow") + (and_cuda ? "[and-cuda]" : "") + "==" + release.version.str()},
        release.version);
    build.cuda_major_minor = release.cuda;
    build.cudnn_series = release.cudnn;
    build.provenance = &release.provenance;
    builds.push_back(std::move(build));
  }
  return builds;
}

std::vector<FrameworkBuild> jax_builds(const manifest::Database& db, const VersionSpec& spec) {
  std::vector<FrameworkBuild> builds;
  for (const auto& plugin : reversed(db.jax)) {
    const auto major = *Version::parse(std::to_string(plugin.cuda_major));
    if (!spec.matches(major)) continue;
    FrameworkBuild build;
    build.choice = choice("jax", "latest", "cuda" + std::to_string(plugin.cuda_major),
                          {"-U", plugin.pip_extra}, major);
    build.cuda_range = plugin.cuda;
    build.cudnn_range = plugin.cudnn;
    build.min_compute_capability = plugin.min_compute_capability;
    build.min_driver_branch = plugin.min_driver_branch;
    build.provenance = &plugin.provenance;
    builds.push_back(std::move(build));
  }
  return builds;
}

}  // namespace

std::vector<std::vector<FrameworkBuild>> requested_builds(const manifest::Database& db,
                                                          const Request& request) {
  std::vector<std::vector<FrameworkBuild>> lists;
  if (request.torch) lists.push_back(torch_builds(db, *request.torch));
  if (request.tensorflow) lists.push_back(tensorflow_builds(db, *request.tensorflow));
  if (request.jax) lists.push_back(jax_builds(db, *request.jax));
  return lists;
}

}  // namespace cudaenv::resolve
