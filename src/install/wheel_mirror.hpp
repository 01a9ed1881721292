#pragma once
// `cudaenv mirror create --source pypi`: a mirror in NVIDIA's redist layout built from the
// wheels of a package index, for air-gapped sites whose only upstream is a PyPI proxy. Each
// wheel is fetched (sha256 checked against the index), its nvidia/<tree>/ repacked as NVIDIA
// packs a redist archive (.tar.xz with one top directory), and a redistrib_<v>.json lists them,
// so machines behind the mirror install with the ordinary `--mirror` path.

#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "install/installer.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

// `plans` are "pypi" plans of one product and release: a toolkit's, or cuDNN's for one or more
// CUDA majors (each becomes a cuda<major> variant). Wheels are kept in the store's download
// cache; the manifest is written last, so a mirror never lists a release it does not hold.
Status mirror_from_wheels(const std::filesystem::path& dir, const std::vector<InstallPlan>& plans,
                          const Store& store, const InstallSettings& settings,
                          InstallObserver& observer);

}  // namespace cudaenv::install
