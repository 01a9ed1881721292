#pragma once

#include "core/error.hpp"

namespace cudaenv::cli {

// Set by the chosen command's callback: an error to report, or the exit code of the process.
struct Outcome {
  int exit_code = 0;
  Status status = Ok{};
};

}  // namespace cudaenv::cli
