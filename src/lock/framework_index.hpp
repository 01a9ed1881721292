#pragma once
// Asking package indexes for the exact framework wheels a lock pins (framework_pin.hpp says what
// is asked). PyTorch's per-build indexes (https://download.pytorch.org/whl/cu124) and PyPI can be
// replaced by mirrors: machines without those servers, and tests on loopback.

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fetch/http.hpp"
#include "lock/framework_pin.hpp"

namespace cudaenv::lock {

struct FrameworkIndexes {
  // Where frameworks that PyPI serves are looked up (PIP_INDEX_URL, the config's index_url, or
  // PyPI), and where that was set ("set by PIP_INDEX_URL").
  std::string pypi;
  std::string pypi_origin;
  // Replaces the base of the per-build indexes a pip line names: with "https://proxy/whl",
  // https://download.pytorch.org/whl/cu124 is read as https://proxy/whl/cu124. Empty: none.
  std::string build_index_base;
  std::string build_index_origin;  // "set by CUDAENV_FRAMEWORK_INDEX"
  fetch::FetchOptions fetch;
};

// The URL the index of `requirement` is read from, mirrors applied.
std::string lookup_url(const FrameworkRequirement& requirement, const FrameworkIndexes& indexes);

// The lock's entry for each framework: the newest version each index offers that its
// requirement accepts. An index that cannot be read is ErrorKind::network, one without such a
// wheel ErrorKind::not_found; both name the framework, the index and how to point at another.
Result<std::map<std::string, LockedFramework>> lock_frameworks(
    const std::vector<FrameworkRequirement>& requirements, const FrameworkIndexes& indexes);

}  // namespace cudaenv::lock
