#pragma once
// `cudaenv doctor`: gather the facts once, run every check over them, return the findings.

#include <vector>

#include "doctor/checks.hpp"
#include "probe/machine.hpp"

namespace cudaenv::doctor {

struct Report {
  ActiveToolkit active;
  std::vector<Finding> findings;  // in the order of the check table
  bool has_failure() const;
  size_t count(CheckStatus status) const;
};

// Everything the checks read, through the probe seams; the independent probes run at once.
// Fails only when a probe could not finish at all (memory ran out): exit 1.
Result<DoctorFacts> gather_facts(const probe::ProbeContext& context);

Report run_doctor(const DoctorFacts& facts, const manifest::Database& db);

}  // namespace cudaenv::doctor
