#pragma once
// Which facts behind an answer no primary source states, so the answer can say so.

#include <vector>

#include "resolve/builds.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::resolve {

// The inferred or unconfirmed records this solution rests on: the toolkit's driver floor, the
// cuDNN release and its support-matrix rows for the toolkit's major, each framework build (its
// series and its variant).
std::vector<UnconfirmedFact> unconfirmed_facts(const manifest::Database& db,
                                               const Solution& solution,
                                               const std::vector<const FrameworkBuild*>& combo);

}  // namespace cudaenv::resolve
