#include "activate/activation.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "activate/host_compiler.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/store.hpp"
#include "project/stores.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

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
  return -1;
}

// Exactly what percent_encoded writes: literal characters from its set and %XX in upper-case
// hex. A NUL cannot be in an environment value, so %00 is not a value cudaenv recorded.
std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      if (!stays_literal(static_cast<unsigned char>(text[i]))) return std::nullopt;
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]), low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0 || (high == 0 && low == 0)) return std::nullopt;
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

bool inside(const fs::path& normal, const fs::path& directory) {
  const auto relative = normal.lexically_relative(directory);
  return !relative.empty() && *relative.begin() != "." && *relative.begin() != "..";
}

bool is_version_token(const std::optional<std::string>& value) {
  return value && !value->empty() && value->size() <= 32 &&
         std::all_of(value->begin(), value->end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// The non-store entries of a list, in order.
std::vector<std::string> foreign_entries(const std::vector<std::string>& entries,
                                         const StoreDirectories& stores) {
  std::vector<std::string> foreign;
  for (const auto& entry : entries) {
    if (!lies_in_store(entry, stores)) foreign.push_back(entry);
  }
  return foreign;
}

// `before` holds exactly the entries of `kept`, the user's in the same order, only cudaenv's
// own moved: activation moved an entry already present to the front, and going back puts it
// where it was. Anything more would let the record reorder or insert what it likes.
bool only_store_entries_moved(const std::vector<std::string>& before,
                              const std::vector<std::string>& kept,
                              const StoreDirectories& stores) {
  auto a = before, b = kept;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b && foreign_entries(before, stores) == foreign_entries(kept, stores);
}

// cudaenv's entries leave the list, and nothing else: only those the record says it added that
// lie inside a store (a forged record can neither delete /usr/bin nor insert anything). When
// nothing is left the variable returns to how it was, unset or empty.
std::optional<std::string> list_reverted(const std::string& current, const ChangedVariable& change,
                                         const StoreDirectories& stores) {
  std::set<std::string> ours;
  for (const auto& entry : change.added) {
    if (lies_in_store(entry, stores)) ours.insert(entry);
  }
  std::vector<std::string> kept;
  for (auto& entry : entries_of(current)) {
    if (!ours.contains(entry)) kept.push_back(std::move(entry));
  }
  if (current == change.set_to && change.before &&
      only_store_entries_moved(entries_of(change.before), kept, stores))
    return change.before;
  if (kept.empty()) return change.before ? std::optional<std::string>("") : std::nullopt;
  return text::join(kept, ":");
}

// A single value goes back only while it still holds what cudaenv set, and what cudaenv set is a
// path in a store (CUDAENV_ACTIVE: a version, and so is what it goes back to; CUDAHOSTCXX: only
// to unset).
bool scalar_revertible(const std::optional<std::string>& now, const ChangedVariable& change,
                       const StoreDirectories& stores) {
  if (now != change.set_to) return false;
  // cudaenv sets CUDAHOSTCXX (a system compiler, outside the store) only where it was unset, so
  // it only ever goes back to unset: a record can never point it at a program.
  if (change.name == "CUDAHOSTCXX") return !change.before;
  if (change.name == "NVCC_PREPEND_FLAGS") return is_prepended_ccbin(change.before, change.set_to);
  if (change.name == "CUDAENV_ACTIVE")
    return is_version_token(change.set_to) && (!change.before || is_version_token(change.before));
  return lies_in_store(change.set_to, stores);
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
  static const std::vector<std::string> names{
      "CUDA_HOME",       "CUDA_PATH",      "CUDAToolkit_ROOT", "CUDACXX",           "PATH",
      "LD_LIBRARY_PATH", "CUDAENV_ACTIVE", "CUDAHOSTCXX",      "NVCC_PREPEND_FLAGS"};
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

bool is_managed_variable(std::string_view name) {
  const auto& names = managed_variables();
  return std::find(names.begin(), names.end(), name) != names.end();
}

namespace {

// One record, `NAME SET BEFORE ADDED`, exactly as encode() writes it.
std::optional<ChangedVariable> decode_change(std::string_view record) {
  const auto fields = text::split(record, ' ');
  if (fields.size() != 4 || !is_managed_variable(fields[0]) || fields[2].empty())
    return std::nullopt;
  ChangedVariable change;
  change.name = fields[0];
  auto set_to = percent_decoded(fields[1]);
  if (!set_to) return std::nullopt;
  change.set_to = std::move(*set_to);
  if (fields[2] != "-") {
    auto before = fields[2].front() == '=' ? percent_decoded(fields[2].substr(1)) : std::nullopt;
    if (!before) return std::nullopt;
    change.before = std::move(*before);
  }
  if (fields[3].empty()) return change;
  if (!is_list_variable(change.name)) return std::nullopt;
  for (const auto& entry : text::split(fields[3], ',')) {
    auto added = percent_decoded(entry);
    if (!added) return std::nullopt;
    change.added.push_back(std::move(*added));
  }
  return change;
}

}  // namespace

std::optional<Activation> decode(std::string_view text) {
  auto records = text::split(text, ';');
  if (records.empty() || records.front() != record_tag) return std::nullopt;
  Activation activation;
  std::set<std::string> seen;
  for (std::size_t i = 1; i < records.size(); ++i) {
    auto change = decode_change(records[i]);
    if (!change || !seen.insert(change->name).second) return std::nullopt;
    activation.variables.push_back(std::move(*change));
  }
  return activation;
}

StoreDirectories store_directories(const Environment& env) {
  const install::Store store = project::store_for(env);
  return {store.toolkits().lexically_normal(), store.cudnn().lexically_normal()};
}

bool lies_in_store(std::string_view path, const StoreDirectories& stores) {
  const auto normal = fs::path(path).lexically_normal();
  return std::any_of(stores.begin(), stores.end(),
                     [&](const fs::path& directory) { return inside(normal, directory); });
}

Environment revert(const Environment& current, const Activation& activation,
                   const StoreDirectories& stores) {
  Environment result = current;
  for (const auto& change : activation.variables) {
    const auto now = current.get(change.name);
    if (is_list_variable(change.name)) {
      if (now) set_or_unset(result, change.name, list_reverted(*now, change, stores));
    } else if (scalar_revertible(now, change, stores)) {
      set_or_unset(result, change.name, change.before);
    }
  }
  return result;
}

Environment without_activation(const Environment& current) {
  std::optional<Activation> activation;
  if (auto recorded = current.get(activation_variable)) activation = decode(*recorded);
  Environment result =
      activation ? revert(current, *activation, store_directories(current)) : current;
  result.unset(activation_variable);
  return result;
}

bool holds_foreign_record(const Environment& current) {
  const auto recorded = current.get(activation_variable);
  return recorded && !decode(*recorded);
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
