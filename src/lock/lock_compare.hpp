#pragma once
// Whether a lock still holds: what `lock --check` reports (against a fresh resolution: .cudaenv,
// the database and the mirror), what `sync` checks (against .cudaenv alone: the mirror is judged
// by the digests in the lock as archives arrive), and which receipts stay valid.

#include <map>
#include <string>
#include <vector>

#include "lock/lock_file.hpp"
#include "project/targets.hpp"

namespace cudaenv::lock {

// Every difference between the lock on disk and a fresh one, one line each, in file order:
// "toolkit.components.cuda_nvcc.sha256: the lock has 1f3a…, the mirror now has 9c0d…". Receipts
// and generated_by are not compared.
std::vector<std::string> differences(const LockFile& stored, const LockFile& fresh);

// The receipts of `stored` recorded against another locked set than `digest`, one line each.
std::vector<std::string> stale_receipts(const LockFile& stored, const std::string& digest);

// Where the lock no longer says what .cudaenv asks: its pins and, when it declares targets,
// their names, drivers and archs.
std::vector<std::string> project_differences(const LockFile& stored,
                                             const std::map<std::string, std::string>& request,
                                             const std::vector<project::DeclaredTarget>& declared);

// The receipts of `old` that still hold for `fresh` (same locked set), carried over into it.
void keep_valid_receipts(const LockFile& old, LockFile& fresh);

}  // namespace cudaenv::lock
