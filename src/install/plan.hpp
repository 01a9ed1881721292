#pragma once
// Planning an install before anything is downloaded: which release a spec means on a mirror,
// its manifest, and which of its archives go into which prefix. Every decision `cudaenv install`
// makes before the first archive byte lives here; the command line only parses and prints.

#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/version.hpp"
#include "fetch/http.hpp"
#include "install/installer.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

// Where releases come from: the mirror's base URL, the store whose manifest cache fetching fills
// (and whose prefixes plans name), and how to fetch.
struct ReleaseSource {
  std::string mirror;
  Store store;
  fetch::FetchOptions fetch;
};

// The newest release of `product` ("cuda", "cudnn") on the mirror matching `spec`; not_found
// naming the newest releases offered when none does. When the mirror has no directory index, an
// exact version (12.4.1) is still tried directly.
Result<Version> choose_release(const ReleaseSource& source, const std::string& product,
                               const VersionSpec& spec);

// What `cudaenv install SPEC [--components ...]` asks for. Specs are text: a malformed one is a
// usage error naming its flag.
struct ToolkitRequest {
  std::string spec;
  std::string components = "full";  // minimal, full or a comma-separated list
};

struct ToolkitPlan {
  InstallPlan install;
  // The compatibility database's revision when it does not know this release (a release newer
  // than the database: its driver and GPU requirements are unknown); nullopt when it does.
  std::optional<std::string> unknown_to_database;
};

// Chooses the release, fetches its manifest and selects its archives for `platform`; the prefix
// is <store>/toolkits/<version>.
Result<ToolkitPlan> plan_toolkit(const ToolkitRequest& request, const ReleaseSource& source,
                                 const std::string& platform);

// The newest cuDNN release matching `spec_text` (the --cudnn flag) that has a build for the
// toolkit's CUDA major, into <store>/cudnn/<version>-cuda<major>. Releases without such a build
// are passed over; not_found when none has one.
Result<InstallPlan> plan_cudnn(const std::string& spec_text, int cuda_major,
                               const ReleaseSource& source, const std::string& platform);

// A spec flag's text as a spec; a usage error naming `flag` ("SPEC", "--cudnn") when malformed.
Result<VersionSpec> parse_spec_flag(const std::string& text, const std::string& flag);

}  // namespace cudaenv::install
