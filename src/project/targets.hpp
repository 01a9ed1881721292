#pragma once
// The hardware classes a project declares in `.cudaenv` (`[targets.a100]`, `[targets.h100]`):
// for each, the oldest driver its machines run and the GPU architectures they hold. `cudaenv
// lock` resolves one set that runs on all of them; `env --target` prints a target's build
// settings; activation names the closest target when the live machine matches none.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"

namespace cudaenv::project {

struct DeclaredTarget {
  std::string name;  // "a100": letters, digits, '-' and '_'
  Version driver;    // the oldest driver on those machines: "535.104.05"
  // Compute capabilities, sorted: those `arch` lists, and once name_gpu_archs has read the
  // database, those of the GPUs `gpu` names.
  std::vector<Version> archs;
  std::vector<std::string> gpus;  // GPU models as written (`gpu = ["H100", "RTX 4090"]`)
  bool gpus_named = false;        // whether `archs` holds the architectures of `gpus` yet
  std::size_t line = 0;           // where [targets.NAME] stands in the file
  std::size_t gpu_line = 0;       // where its `gpu` stands
  // Whether `archs` is the whole list: a target naming GPUs knows it only after the database
  // named them (the prompt hook reads no database: it matches such a target by driver alone).
  bool archs_known() const { return gpus.empty() || gpus_named; }
};

// GPU models the database knows, by name, with their compute capability: {"RTX 4090", 8.9}.
using KnownGpus = std::vector<std::pair<std::string, Version>>;

// "NVIDIA GeForce RTX 4090", "rtx-4090" and "RTX4090" all name "RTX 4090": upper case, without
// the words NVIDIA, GeForce and Tesla, letters and digits only.
std::string gpu_key(std::string_view name);

// Adds to each target's archs those of the GPUs it names, as `known` maps them. A name `known`
// lacks is a usage error naming the file, the line and the closest known name ("did you mean
// \"H100\"?").
Status name_gpu_archs(std::vector<DeclaredTarget>& targets, const KnownGpus& known,
                      const std::string& path);

// The targets `text` (a .cudaenv) declares, in file order; empty when it has no [targets]. Errors
// name the file and line and say what to write: "/repo/.cudaenv:7: targets.a100.driver must be a
// quoted driver version such as \"535.104.05\"". A file holding just a version has no targets.
Result<std::vector<DeclaredTarget>> parse_targets(std::string_view text, const std::string& path);
Result<std::vector<DeclaredTarget>> read_targets(const std::filesystem::path& project_file);

// The declared target called `name`, or nullptr.
const DeclaredTarget* find_target(const std::vector<DeclaredTarget>& targets,
                                  std::string_view name);
// As find_target, for `--target NAME`: a missing one is the error naming the file (`shown`,
// printable already) and the targets it does declare, or how to declare one.
Result<const DeclaredTarget*> require_target(const std::vector<DeclaredTarget>& targets,
                                             std::string_view name, const std::string& shown);

// How this machine (its driver and its GPUs' compute capabilities) stands against the targets.
struct TargetMatch {
  const DeclaredTarget* match = nullptr;    // the first target it belongs to; nullptr: none
  const DeclaredTarget* closest = nullptr;  // when none: the one it misses least
  std::string why;                          // when none: what the closest one misses
};
// A machine belongs to a target when its driver is at least the target's floor and the target
// lists every GPU's architecture. Without targets, or without a GPU, it matches nothing and
// nothing is closest (there is nothing to say).
TargetMatch match_target(const std::vector<DeclaredTarget>& targets,
                         const std::optional<Version>& driver, const std::vector<Version>& gpus);

// When `driver` is below the floor of every target: the one with the lowest floor (the closest);
// else nullptr. What a machine whose GPUs cannot be read (the prompt hook) can still tell.
const DeclaredTarget* lowest_floor_above(const std::vector<DeclaredTarget>& targets,
                                         const Version& driver);

// "this machine's driver 470.57.02 is below the floor of every target /repo/.cudaenv declares;
// the closest is a100 (driver >= 535.104.05)", or "" when some target's floor is met. `file` is
// printed as it is given: pass it escaped.
std::string driver_below_targets_note(const std::vector<DeclaredTarget>& targets,
                                      const Version& driver, const std::string& file);

// The note for a machine that belongs to none of `targets`: with its GPUs' archs known, "this
// machine matches none of the targets /repo/.cudaenv declares; the closest is a100: its arch list
// has no 9.0"; without them, driver_below_targets_note. "" when it belongs to one (or there is
// nothing to say). `file` is printed as it is given: pass it escaped.
std::string target_mismatch_note(const std::vector<DeclaredTarget>& targets, const Version& driver,
                                 const std::vector<Version>& gpus, const std::string& file);

// "8.0" → "80" (CMAKE_CUDA_ARCHITECTURES, sm_80).
std::string arch_digits(const Version& arch);

}  // namespace cudaenv::project
