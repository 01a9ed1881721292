#include "activate/activation.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/text.hpp"

namespace cudaenv::activate {

namespace {

constexpr const char* record_tag = "cudaenv1";

bool stays_literal(unsigned char c) {
  return std::isalnum(c) != 0 || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' ||
         c == ':' || c == '@' || c == '~';
}

std::string percent_encoded(std::string_view value) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if (stays_literal(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]), low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

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

// The record is a line of printable ASCII, byte-transparent for any value (JSON is not: an
// environment value need not be valid UTF-8):
//   cudaenv1;NAME SET BEFORE ADDED;NAME SET BEFORE ADDED...
// SET and each entry of ADDED (separated by ',') are percent-encoded; BEFORE is '-' for unset,
// else '=' and the percent-encoded value.
std::string encode(const Activation& activation) {
  std::string out = record_tag;
  for (const auto& change : activation.variables) {
    out += ';' + percent_encoded(change.name) + ' ' + percent_encoded(change.set_to) + ' ';
    out += change.before ? "=" + percent_encoded(*change.before) : std::string("-");
    out += ' ';
    for (std::size_t i = 0; i < change.added.size(); ++i)
      out += (i == 0 ? "" : ",") + percent_encoded(change.added[i]);
  }
  return out;
}

std::optional<Activation> decode(std::string_view text) {
  auto records = text::split(text, ';');
  if (records.empty() || records.front() != record_tag) return std::nullopt;
  Activation activation;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto fields = text::split(records[i], ' ');
    if (fields.size() != 4) return std::nullopt;
    ChangedVariable change;
    auto name = percent_decoded(fields[0]);
    auto set_to = percent_decoded(fields[1]);
    if (!name || !set_to || fields[2].empty()) return std::nullopt;
    change.name = std::move(*name);
    change.set_to = std::move(*set_to);
    if (fields[2] != "-") {
      auto before = fields[2].front() == '=' ? percent_decoded(fields[2].substr(1)) : std::nullopt;
      if (!before) return std::nullopt;
      change.before = std::move(*before);
    }
    if (!fields[3].empty()) {
      for (const auto& entry : text::split(fields[3], ',')) {
        auto added = percent_decoded(entry);
        if (!added) return std::nullopt;
        change.added.push_back(std::move(*added));
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
  std::optional<Activation> activation;
  if (auto recorded = current.get(activation_variable)) activation = decode(*recorded);
  Environment result = activation ? revert(current, *activation) : current;
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
