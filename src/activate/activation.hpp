#pragma once
// What an activation changed, kept in the shell's CUDAENV_DIFF so the next hook can undo exactly
// that (DESIGN.md §4): a variable that was unset is unset again, an empty one is empty again, and
// only the list entries cudaenv added leave PATH, so the user's own edits in between survive.

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
bool is_list_variable(std::string_view name);

// What going from `base` to `target` changes among the managed variables.
Activation record_activation(const Environment& base, const Environment& target);

// One line of JSON, safe to keep in an environment variable.
std::string encode(const Activation& activation);
// nullopt when the text is not an encoded activation (edited by hand, or from another version).
std::optional<Activation> decode(std::string_view text);

// `current` with `activation` undone: a variable still holding what cudaenv set goes back to its
// value before; one the user changed meanwhile keeps the user's value, less cudaenv's entries.
Environment revert(const Environment& current, const Activation& activation);

// `current` with the activation recorded in its CUDAENV_DIFF undone, and CUDAENV_DIFF removed.
Environment without_activation(const Environment& current);

// Variable → new value (nullopt: unset) for every variable that differs between the two.
using Changes = std::map<std::string, std::optional<std::string>>;
Changes changes_between(const Environment& from, const Environment& to);

}  // namespace cudaenv::activate
