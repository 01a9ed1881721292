#include "activate/activation.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace cudaenv::activate {

namespace {

using nlohmann::json;

std::vector<std::string> entries_of(const std::optional<std::string>& list) {
  if (!list || list->empty()) return {};
  return text::split(*list, ':');
}

// Entries of `target` that `base` does not have, in order.
std::vector<std::string> added_entries(const std::optional<std::string>& base,
                                       const std::string& target) {
  const auto before = entries_of(base);
  const std::set<std::string> had(before.begin(), before.end());
  std::vector<std::string> added;
  for (auto& entry : entries_of(target)) {
    if (!had.contains(entry)) added.push_back(std::move(entry));
  }
  return added;
}

// A list the user edited after activation: their entries stay, cudaenv's go. When nothing of
// theirs is left the variable returns to how it was (unset or empty).
std::optional<std::string> list_without(const std::string& current, const ChangedVariable& change) {
  const std::set<std::string> ours(change.added.begin(), change.added.end());
  std::vector<std::string> kept;
  for (auto& entry : entries_of(current)) {
    if (!ours.contains(entry)) kept.push_back(std::move(entry));
  }
  if (kept.empty()) return change.before ? std::optional<std::string>("") : std::nullopt;
  return text::join(kept, ":");
}

void set_or_unset(Environment& env, const std::string& name,
                  const std::optional<std::string>& value) {
  if (value) {
    env.set(name, *value);
  } else {
    env.unset(name);
  }
}

}  // namespace

const std::vector<std::string>& managed_variables() {
  static const std::vector<std::string> names{"CUDA_HOME",     "CUDA_PATH", "CUDAToolkit_ROOT",
                                              "CUDACXX",       "PATH",      "LD_LIBRARY_PATH",
                                              "CUDAENV_ACTIVE"};
  return names;
}

bool is_list_variable(std::string_view name) { return name == "PATH" || name == "LD_LIBRARY_PATH"; }

Activation record_activation(const Environment& base, const Environment& target) {
  Activation activation;
  for (const auto& name : managed_variables()) {
    const auto before = base.get(name);
    const auto after = target.get(name);
    if (before == after || !after) continue;
    ChangedVariable change{name, before, *after, {}};
    if (is_list_variable(name)) change.added = added_entries(before, *after);
    activation.variables.push_back(std::move(change));
  }
  return activation;
}

std::string encode(const Activation& activation) {
  json variables = json::array();
  for (const auto& change : activation.variables) {
    json item{{"name", change.name}, {"set", change.set_to}};
    item["before"] = change.before ? json(*change.before) : json(nullptr);
    if (!change.added.empty()) item["added"] = change.added;
    variables.push_back(std::move(item));
  }
  // ensure_ascii: any control character becomes \uXXXX, so the value stays one printable line.
  return json{{"v", 1}, {"variables", variables}}.dump(-1, ' ', true);
}

std::optional<Activation> decode(std::string_view text) {
  const auto parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || parsed.value("v", 0) != 1)
    return std::nullopt;
  const auto variables = parsed.find("variables");
  if (variables == parsed.end() || !variables->is_array()) return std::nullopt;
  Activation activation;
  for (const auto& item : *variables) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string() ||
        !item.contains("set") || !item["set"].is_string())
      return std::nullopt;
    ChangedVariable change;
    change.name = item["name"];
    change.set_to = item["set"];
    if (auto before = item.find("before"); before != item.end() && before->is_string())
      change.before = before->get<std::string>();
    if (auto added = item.find("added"); added != item.end() && added->is_array()) {
      for (const auto& entry : *added) {
        if (entry.is_string()) change.added.push_back(entry.get<std::string>());
      }
    }
    activation.variables.push_back(std::move(change));
  }
  return activation;
}

Environment revert(const Environment& current, const Activation& activation) {
  Environment result = current;
  for (const auto& change : activation.variables) {
    const auto now = current.get(change.name);
    if (now == change.set_to) {
      set_or_unset(result, change.name, change.before);
    } else if (now && is_list_variable(change.name)) {
      set_or_unset(result, change.name, list_without(*now, change));
    }
  }
  return result;
}

Environment without_activation(const Environment& current) {
  Environment result = current;
  if (auto recorded = current.get(activation_variable)) {
    if (auto activation = decode(*recorded)) result = revert(current, *activation);
  }
  result.unset(activation_variable);
  return result;
}

Changes changes_between(const Environment& from, const Environment& to) {
  Changes changes;
  for (const auto& [name, value] : to.variables()) {
    if (from.get(name) != value) changes[name] = value;
  }
  for (const auto& [name, value] : from.variables()) {
    if (!to.get(name)) changes[name] = std::nullopt;
  }
  return changes;
}

}  // namespace cudaenv::activate
