#pragma once
// The JSON document of `cudaenv verify --json` (docs/json.md).

#include <nlohmann/json.hpp>

#include "verify/verify.hpp"

namespace cudaenv::cli {

nlohmann::ordered_json verification_to_json(const verify::Verification& verification);

}  // namespace cudaenv::cli
