#pragma once
// The stable JSON shape of `cudaenv info --json`, documented in docs/json.md.

#include <nlohmann/json.hpp>

#include "probe/facts.hpp"

namespace cudaenv::cli {

nlohmann::ordered_json info_to_json(const probe::MachineFacts& facts);

}  // namespace cudaenv::cli
