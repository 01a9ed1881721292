#pragma once
// The hardware classes a project declares in `.cudaenv` (`[targets.a100]`, `[targets.h100]`):
// for each, the oldest driver its machines run and the GPU architectures they hold. `cudaenv
// lock` resolves one set that runs on all of them; `env --target` prints a target's build
// settings; activation names the closest target when the live machine matches none.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"

namespace cudaenv::project {

struct DeclaredTarget {
  std::string name;            // "a100": letters, digits, '-' and '_'
  Version driver;              // the oldest driver on those machines: "535.104.05"
  std::vector<Version> archs;  // compute capabilities, as written: "8.0", "9.0"
  std::size_t line = 0;        // where [targets.NAME] stands in the file
};

// The targets `text` (a .cudaenv) declares, in file order; empty when it has no [targets]. Errors
// name the file and line and say what to write: "/repo/.cudaenv:7: targets.a100.driver must be a
// quoted driver version such as \"535.104.05\"". A file holding just a version has no targets.
Result<std::vector<DeclaredTarget>> parse_targets(std::string_view text, const std::string& path);
Result<std::vector<DeclaredTarget>> read_targets(const std::filesystem::path& project_file);

// The declared target called `name`, or nullptr.
const DeclaredTarget* find_target(const std::vector<DeclaredTarget>& targets,
                                  std::string_view name);

// "8.0" → "80" (CMAKE_CUDA_ARCHITECTURES, sm_80).
std::string arch_digits(const Version& arch);

}  // namespace cudaenv::project
