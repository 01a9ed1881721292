#pragma once
// When nothing fits: relax one constraint at a time and say which smallest change would make a
// set fit (a driver version, a CUDA range, a framework version, a cuDNN version).

#include <optional>
#include <string>
#include <vector>

#include "manifest/database.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::resolve {

// A requested framework version none of whose builds carries code for a target GPU: the blocker
// whatever the driver, named before the per-toolkit rejections.
std::optional<Rejection> framework_blocker(const manifest::Database& db, const Target& target,
                                           const Request& request);

std::vector<std::string> suggest(const manifest::Database& db, const Target& target,
                                 const Request& request);

}  // namespace cudaenv::resolve
