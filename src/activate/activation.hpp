#pragma once
// What an activation changed, kept in the shell's CUDAENV_DIFF so the next hook can undo exactly
// that (docs/design.md §4): a variable that was unset is unset again, an empty one is empty again,
// and only the list entries cudaenv added leave PATH, so the user's own edits in between survive.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/environment.hpp"

namespace cudaenv::activate {

constexpr const char* activation_variable = "CUDAENV_DIFF";

struct ChangedVariable {
  std::string name;
  std::optional<std::string> before;  // nullopt: it was unset
  std::string set_to;                 // what cudaenv set it to
  std::vector<std::string> added;     // list variables: the entries cudaenv added
};

struct Activation {
  std::vector<ChangedVariable> variables;
};

// The variables cudaenv may change; PATH-like ones are lists joined with ':'.
const std::vector<std::string>& managed_variables();
bool is_managed_variable(std::string_view name);
bool is_list_variable(std::string_view name);

// What going from `base` to `target` changes among the managed variables.
Activation record_activation(const Environment& base, const Environment& target);

// One line of printable ASCII, safe to keep in an environment variable.
std::string encode(const Activation& activation);
// CUDAENV_DIFF is input like any other: any program can set it. nullopt unless the text follows
// the grammar encode() writes exactly and names only managed variables, each at most once.
std::optional<Activation> decode(std::string_view text);

// The directories whose contents activation puts in the environment: the data root's toolkits/
// and cudnn/ (lexically normal).
using StoreDirectories = std::vector<std::filesystem::path>;
StoreDirectories store_directories(const Environment& env);
// `path`, taken lexically ("..", "//" resolved), names something below one of `stores`.
bool lies_in_store(std::string_view path, const StoreDirectories& stores);

// `current` with `activation` undone, trusting the record only as far as it names cudaenv's own
// work: a list loses just the entries the record says cudaenv added that lie in a store (and
// gets its prior order back when only store entries moved); a single value still holding what
// cudaenv set, a path in a store, goes back to its value before. Everything else stays as it is,
// so the user's own changes survive and a forged record can set nothing.
Environment revert(const Environment& current, const Activation& activation,
                   const StoreDirectories& stores);

// `current` with the activation recorded in its CUDAENV_DIFF undone, and CUDAENV_DIFF removed.
// A CUDAENV_DIFF that does not decode is removed and nothing is reverted.
Environment without_activation(const Environment& current);

// CUDAENV_DIFF is set to something cudaenv did not write (the prompt hook says so once).
bool holds_foreign_record(const Environment& current);

// Variable → new value (nullopt: unset) for every variable that differs between the two.
using Changes = std::map<std::string, std::optional<std::string>>;
Changes changes_between(const Environment& from, const Environment& to);

}  // namespace cudaenv::activate
