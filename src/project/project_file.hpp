#pragma once
// `.cudaenv`, the per-project file a team commits (docs/design.md §3): TOML with `cuda = "12.1"`,
// an optional `cudnn = "8.9"` and an optional [frameworks] table, or simply a version on one line.
// The file comes with cloned repositories: it is parsed as data and nothing in it is executed.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "project/targets.hpp"

namespace cudaenv::project {

constexpr const char* project_file_name = ".cudaenv";

struct ProjectFile {
  std::optional<VersionSpec> cuda;
  std::optional<VersionSpec> cudnn;
  std::map<std::string, VersionSpec> frameworks;  // torch, tensorflow, jax
  std::string host_compiler;  // "g++-11" (project/schema.hpp: is_host_compiler_name); "" none
  std::vector<DeclaredTarget> targets;  // [targets.NAME], in file order
  // Keys the schema does not know, beside a valid `cuda`: ignored, each said with its file:line
  // and a suggestion. (Without a valid `cuda` an unknown key is an error: see parse_project_file.)
  std::vector<Error> warnings;
  // `venv = ".venv"`: the project's Python environment, where `sync` installs the locked
  // frameworks; a relative path inside the project (untrusted::Field::relative_path, so no ".."
  // and not absolute), as written. "" when the file names none.
  std::string venv = {};
  // Companion wheels under [frameworks] that the resolver does not know (`flash-attn = "2.7"`,
  // `xformers = "*"`): PEP 503 names (untrusted::Field::python_package, no extras), each locked
  // to a build for the locked torch and CUDA (docs/lockfile.md).
  std::map<std::string, VersionSpec> companions = {};
};

// The file's pin of a framework ("torch", "tensorflow", "jax"), if any.
std::optional<VersionSpec> framework_pin(const ProjectFile& file, const std::string& name);

// The version of a file that holds only a version ("12.1", besides comments and blank lines);
// nullopt for any other text, TOML included.
std::optional<std::string> bare_version(std::string_view text);

// Errors name the file and the line: "/repo/.cudaenv:2: cuda: invalid version spec "x"". A key
// the schema (project/schema.hpp) does not know is an error when the file sets no valid `cuda`
// (it was probably meant as the pin: `cdua`, `CUDA`, a `cuda` below [frameworks]; the system
// toolkit must not be used in its place), and a warning beside a valid `cuda`.
Result<ProjectFile> parse_project_file(std::string_view text, const std::string& path);
Result<ProjectFile> read_project_file(const std::filesystem::path& path);

// The nearest .cudaenv from `start` upward, or nullopt.
std::optional<std::filesystem::path> find_project_file(const std::filesystem::path& start);

}  // namespace cudaenv::project
