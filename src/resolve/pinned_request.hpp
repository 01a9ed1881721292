#pragma once
// The one policy that turns pinned versions (a .cudaenv's, or resolve's flags) into a resolver
// request, for `resolve`, `use`, `lock` and `export` alike: a spec naming nvcc's version asks for
// the release that ships it, a torch pin with no build for the pinned CUDA is refused, and a
// version the database does not know is refused.

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "manifest/database.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::resolve {

struct Pins {
  std::optional<VersionSpec> cuda, cudnn, torch, tensorflow, jax;
};

struct PinnedRequest {
  Request request;
  std::vector<std::string> notes;  // "13.0.88 is nvcc's version: resolving CUDA 13.0.2"
};

// `origin` names the file the pins come from (errors start with it); empty for flags, which may
// ask for a torch/CUDA pair the resolver then answers with "no compatible set".
Result<PinnedRequest> request_for_pins(const manifest::Database& db, const Pins& pins,
                                       const std::string& origin);

}  // namespace cudaenv::resolve
