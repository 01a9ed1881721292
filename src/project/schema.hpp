#pragma once
// The keys `.cudaenv` and config.toml may hold, and what is said about any other key: where it
// is (file:line) and what was probably meant ("cdua" → "cuda", a top-level "torch" → under
// [frameworks], "CUDA" → "cuda"). The values of known keys are checked by their parsers; this
// finds the keys nobody reads, so a typo is never silently ignored.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "core/error.hpp"
#include "project/targets.hpp"

namespace cudaenv::project {

// named_tables: a table of tables with names of the user's choosing ([targets.a100]), whose
// keys are those the schema lists under "<key>.*".
enum class ValueType { version_spec, string, integer, table, string_list, named_tables };

struct KeySpec {
  std::string_view table;  // "" for the top level, else the table's name
  std::string_view key;
  ValueType type;
};

// Every key of a .cudaenv, and of config.toml.
const std::vector<KeySpec>& project_file_keys();
const std::vector<KeySpec>& config_keys();

// A key the schema does not have where it stands.
struct UnknownKey {
  std::size_t line = 0;
  std::string key;             // as written, dotted below a table: "frameworks.pytorch"
  std::string problem;         // "unknown key \"cdua\""
  std::string suggestion;      // "did you mean \"cuda\"?" ("" when nothing is close)
  bool suggests_cuda = false;  // what was meant is probably the top-level `cuda`
};

// The unknown keys of `root`, in file order. A key inside an unknown table is not listed
// separately: the table is.
std::vector<UnknownKey> unknown_keys(const toml::table& root, const std::vector<KeySpec>& schema);

// Whether `key`, under [frameworks], names a companion wheel (flash-attn, xformers): no key of
// the schema anywhere, nor close to one (`pytorch` is a misspelt torch, `cudnn` a misplaced pin).
bool is_companion_key(std::string_view key);

// The number of single-character edits (insert, delete, replace, swap of neighbours) from `a` to
// `b`, ignoring case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Whether `name` may be a .cudaenv's host_compiler: "g++", "g++-11", "clang++", "clang++-14". A
// program name, looked up on PATH, never a path: the file comes with cloned repositories.
bool is_host_compiler_name(std::string_view name);

// What the text right of `=` on line `line` (1-based) says, comment and blanks removed: the raw
// value, to quote it back in a suggestion (`CUDA=13.0` → `cuda = "13.0"`).
std::string raw_value_on_line(std::string_view text, std::size_t line);

// The [targets.NAME] tables of a parsed .cudaenv (project/targets.hpp), checked; errors name
// `path` and the line.
Result<std::vector<DeclaredTarget>> targets_in(const toml::table& root, const std::string& path);

}  // namespace cudaenv::project
