#pragma once
// `cudaenv lock`: the one set that runs on every declared target, resolved without any of their
// GPUs present, with each archive's sha256 and size read from the mirror's manifests.

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "install/plan.hpp"
#include "install/pypi_plan.hpp"
#include "lock/framework_pin.hpp"
#include "lock/lock_file.hpp"
#include "manifest/load.hpp"
#include "project/project_file.hpp"

namespace cudaenv::lock {

// NVIDIA's platform name for the archives a lock pins: the machines a lock serves are x86-64.
constexpr const char* lock_platform = "linux-x86_64";

struct LockInputs {
  const project::ProjectFile& project;
  // The targets to lock for: the declared ones, or one standing for this machine.
  const std::vector<project::DeclaredTarget>& targets;
  const manifest::SelectedDatabase& database;
  const install::ReleaseSource& source;
  std::string generated_by;  // "cudaenv 1.2.0"
  std::string origin = {};   // the .cudaenv the pins come from, for errors
  // Set: the toolkit's and cuDNN's files are NVIDIA's wheels from this package index (the lock's
  // source "pypi"), not archives from `source`'s mirror.
  const install::IndexSource* index = nullptr;
};

// The set for these inputs: the lock without its frameworks, and what each framework build the
// set holds asks of the wheel to pin (framework_index.hpp asks the indexes; `lock --check` does
// not). When no set runs on every target: ErrorKind::no_compatible_set naming the target that
// breaks it and, in the hint, the smallest change. A pinned version the database does not know
// is ErrorKind::not_found; a release the mirror lacks likewise.
struct ResolvedLock {
  LockFile lock;
  std::vector<FrameworkRequirement> frameworks;
  // What the lock left out, said to the user: a cuDNN the mirror lacks that the frameworks'
  // wheels bring.
  std::vector<std::string> notes = {};
};
Result<ResolvedLock> resolve_lock(const LockInputs& inputs);

// The wheels of CUDA `version` (every component the index has wheels of for the lock's platform)
// as the index lists them: what a lock of source "pypi" pins, and what `sync` checks one against.
// A release below 13 (its wheels bring no nvcc) is a usage error naming --source redist; a wheel
// the index lists without a size is ErrorKind::integrity.
Result<install::PypiToolkitPlan> index_toolkit(const std::string& version,
                                               const install::IndexSource& index);

// What .cudaenv asks for, as the lock records it: {"cuda": "12.4", "cudnn": "9", "torch": "2.5"}.
std::map<std::string, std::string> request_of(const project::ProjectFile& project);

// sha256 (hex) of the database files in use, by name, so that any change to a fact shows.
std::string database_digest(const manifest::SelectedDatabase& database);

}  // namespace cudaenv::lock
