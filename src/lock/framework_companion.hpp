#pragma once
// Companion wheels a project pins beside torch (`[frameworks]` flash-attn = "2.7", xformers =
// "*"): extensions compiled against one torch release and one CUDA. The lock pins one only when
// its index offers a build for the locked torch and CUDA, judged by what the wheel says of
// itself: its METADATA's Requires-Dist on torch (read through the index's PEP 658 .metadata
// file) and the CUDA and torch tags of its local version (flash-attn's "+cu12torch2.5"), or
// the per-build index it comes from (download.pytorch.org/whl/cu124 holds cu124 builds only).

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/version.hpp"
#include "lock/framework_index.hpp"
#include "lock/framework_pin.hpp"
#include "lock/lock_file.hpp"

namespace cudaenv::lock {

// A companion's version: a final release with an optional post-release ("0.0.28.post3", as
// xformers numbers its rebuilds) and a local label ("cu12torch2.5cxx11abifalse", lower case).
// nullopt for pre- and dev-releases and anything else.
struct CompanionVersion {
  Version release;
  int post = -1;  // -1: none
  std::string local_tag;
};
std::optional<CompanionVersion> parse_companion_version(std::string_view text);

// The locked torch a companion is built for: "2.5.1+cu124" from PyTorch's cu124 index.
struct TorchBuild {
  Version release;
  std::string cuda_tag;   // "cu124"; empty for a build without one
  std::string index_url;  // the lock's index_url of torch
};
std::optional<TorchBuild> torch_build(const LockedFramework& torch);

// What a local label says of the build: a "cu124" (or the CUDA major alone, "cu12") and a
// "torch2.5"; each, when named, either agrees with the locked torch or not.
struct TagFit {
  bool names_cuda = false;
  bool cuda_agrees = false;
  bool names_torch = false;
  bool torch_agrees = false;
};
TagFit tag_fit(std::string_view local_tag, const TorchBuild& torch);

// The wheel's own requirement on torch: the Requires-Dist lines of its METADATA that hold
// without an extra. `present` false: it names none; `spec` nullopt with `present`: any torch;
// `readable` false: a specifier this reader does not take (counted as not fitting).
struct TorchRequirement {
  bool present = false;
  std::optional<VersionSpec> spec;
  bool readable = true;
};
TorchRequirement torch_requirement(std::string_view metadata);

// Whether a build fits the locked torch: no tag and no requirement contradicts it, something
// positively ties it to this torch (a torch tag, or a versioned requirement), and its CUDA is
// named by a tag or by the per-build index it comes from.
bool fits_torch(const TagFit& tags, const TorchRequirement& requirement, const TorchBuild& torch,
                bool from_build_index);

// The lock's entries for the companions `.cudaenv` asks for, each the newest build that fits
// the locked torch (in `locked`) and matches its spec: looked up first on torch's per-build
// index (mirrors applied as for torch), then on PyPI when that index has no such project. None
// fitting is ErrorKind::not_found with the nearest version that does and the fix; no torch in
// the lock is ErrorKind::usage; an unreadable index ErrorKind::network.
Result<std::map<std::string, LockedFramework>> lock_companions(
    const std::map<std::string, VersionSpec>& asked,
    const std::map<std::string, LockedFramework>& locked, const FrameworkIndexes& indexes);

// `lock --check`, without an index: a locked companion is current while it matches its spec,
// is locked for torch, its tags agree with the locked torch, and its index and pip line are the
// ones it gets. `current` holds the entries of the asked companions, `problems` one line each.
FrameworkCheck check_companions(const std::map<std::string, LockedFramework>& locked,
                                const std::map<std::string, VersionSpec>& asked);

}  // namespace cudaenv::lock
