#include "project/schema.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"

namespace cudaenv::project {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string quoted(std::string_view key) { return "\"" + text::printable(key) + "\""; }

// Where a key of the schema is written, for a suggestion: "at the top" or "under [frameworks]".
std::string place_of(const KeySpec& spec) {
  if (spec.table.empty()) return "at the top of the file, above any [table] line";
  auto table = std::string(spec.table);
  if (text::ends_with(table, ".*")) table.replace(table.size() - 1, 1, "NAME");
  return "under [" + table + "]";
}

std::string name_of(const KeySpec& spec) {
  if (spec.type == ValueType::named_tables) return "[" + std::string(spec.key) + ".NAME]";
  return spec.type == ValueType::table ? "[" + std::string(spec.key) + "]" : quoted(spec.key);
}

// The keys of the schema closest to `key` (same table first), with their distance.
std::vector<const KeySpec*> nearest(std::string_view key, std::string_view table,
                                    const std::vector<KeySpec>& schema) {
  const std::size_t limit = std::min<std::size_t>(2, std::max<std::size_t>(1, key.size() / 3));
  std::size_t best = limit + 1;
  std::vector<const KeySpec*> found;
  for (bool same_table : {true, false}) {
    for (const auto& spec : schema) {
      if ((spec.table == table) != same_table) continue;
      const auto distance = edit_distance(key, spec.key);
      if (distance > best) continue;
      if (distance < best) found.clear();
      best = distance;
      found.push_back(&spec);
    }
    if (!found.empty()) break;
  }
  return found;
}

std::string listing(std::string_view table, const std::vector<KeySpec>& schema) {
  std::string names;
  for (const auto& spec : schema) {
    if (spec.table != table) continue;
    names += (names.empty() ? "" : ", ") + name_of(spec);
  }
  auto shown = std::string(table);
  if (text::ends_with(shown, ".*")) shown.replace(shown.size() - 1, 1, "NAME");
  return (table.empty() ? "the keys are " : "the keys of [" + shown + "] are ") + names;
}

// "did you mean …?" for a key that is nowhere in the schema where it stands.
std::string suggestion_for(std::string_view key, std::string_view table,
                           const std::vector<KeySpec>& schema, bool& suggests_cuda) {
  const auto candidates = nearest(key, table, schema);
  if (candidates.empty()) return listing(table, schema);
  std::string names;
  for (const auto* spec : candidates) {
    names += (names.empty() ? "" : " or ") + name_of(*spec);
    if (spec->table != table) names += " " + place_of(*spec);
    if (spec->table.empty() && spec->key == "cuda") suggests_cuda = true;
  }
  const bool case_only = candidates.size() == 1 && lower(key) == candidates.front()->key;
  return (case_only ? "keys are lower-case: write " : "did you mean ") + names +
         (case_only ? "" : "?");
}

const KeySpec* find_key(std::string_view key, std::string_view table,
                        const std::vector<KeySpec>& schema) {
  for (const auto& spec : schema) {
    if (spec.table == table && spec.key == key) return &spec;
  }
  return nullptr;
}

UnknownKey describe_unknown(std::string_view key, std::string_view table, std::size_t line,
                            const std::vector<KeySpec>& schema) {
  UnknownKey unknown;
  unknown.line = line;
  unknown.key = table.empty() ? std::string(key) : std::string(table) + "." + std::string(key);
  const auto where = table.empty() ? std::string() : " in [" + std::string(table) + "]";
  // The right name in the wrong place: a top-level `torch`, a `cuda` below [frameworks].
  for (const auto& spec : schema) {
    if (spec.key != key || spec.table == table) continue;
    unknown.problem = quoted(key) + " does not belong" + (where.empty() ? " here" : where);
    unknown.suggestion = "put it " + place_of(spec);
    unknown.suggests_cuda = spec.table.empty() && spec.key == "cuda";
    return unknown;
  }
  unknown.problem = "unknown key " + quoted(key) + where;
  unknown.suggestion = suggestion_for(key, table, schema, unknown.suggests_cuda);
  return unknown;
}

void check_table(const toml::table& table, std::string_view name,
                 const std::vector<KeySpec>& schema, std::vector<UnknownKey>& out,
                 std::string_view shown_name = {});

// Each table of [targets] is checked against the keys listed under "targets.*"; what it is
// called is the user's choice.
void check_named_tables(const toml::table& table, std::string_view name,
                        const std::vector<KeySpec>& schema, std::vector<UnknownKey>& out) {
  const auto pattern = std::string(name) + ".*";
  for (const auto& [key, node] : table) {
    if (!node.is_table()) continue;  // the table's own parser says what is wrong with it
    check_table(*node.as_table(), pattern, schema, out,
                std::string(name) + "." + std::string(key.str()));
  }
}

void check_table(const toml::table& table, std::string_view name,
                 const std::vector<KeySpec>& schema, std::vector<UnknownKey>& out,
                 std::string_view shown_name) {
  for (const auto& [key, node] : table) {
    const auto* spec = find_key(key.str(), name, schema);
    if (spec == nullptr && name == "frameworks" && &schema == &project_file_keys() &&
        is_companion_key(key.str()))
      continue;  // project_file.cpp reads it as a companion wheel
    if (spec == nullptr) {
      auto unknown = describe_unknown(key.str(), name, key.source().begin.line, schema);
      if (!shown_name.empty()) {
        unknown.key = std::string(shown_name) + "." + std::string(key.str());
        unknown.problem =
            "unknown key " + quoted(key.str()) + " in [" + text::printable(shown_name) + "]";
      }
      out.push_back(std::move(unknown));
    } else if (spec->type == ValueType::table && node.is_table()) {
      check_table(*node.as_table(), key.str(), schema, out);
    } else if (spec->type == ValueType::named_tables && node.is_table()) {
      check_named_tables(*node.as_table(), key.str(), schema, out);
    }
  }
}

}  // namespace

const std::vector<KeySpec>& project_file_keys() {
  static const std::vector<KeySpec> keys{
      {"", "cuda", ValueType::version_spec},
      {"", "cudnn", ValueType::version_spec},
      {"", "host_compiler", ValueType::string},
      {"", "venv", ValueType::string},
      {"", "frameworks", ValueType::table},
      {"frameworks", "torch", ValueType::version_spec},
      {"frameworks", "tensorflow", ValueType::version_spec},
      {"frameworks", "jax", ValueType::version_spec},
      {"", "targets", ValueType::named_tables},
      {"targets.*", "driver", ValueType::string},
      {"targets.*", "arch", ValueType::string_list},
      {"targets.*", "gpu", ValueType::string_list},
  };
  return keys;
}

const std::vector<KeySpec>& config_keys() {
  static const std::vector<KeySpec> keys{
      {"", "cuda", ValueType::version_spec},
      {"", "mirror", ValueType::string},
      {"", "source", ValueType::string},
      {"", "index_url", ValueType::string},
      {"", "framework_index", ValueType::string},
      {"", "download", ValueType::table},
      {"download", "jobs", ValueType::integer},
      {"download", "ca_bundle", ValueType::string},
      {"download", "stall_timeout", ValueType::integer},
      {"", "modules_dir", ValueType::string},
      {"", "modules_format", ValueType::string},
      {"", "system_roots", ValueType::string},
  };
  return keys;
}

bool is_companion_key(std::string_view key) {
  const auto& schema = project_file_keys();
  return nearest(key, "frameworks", schema).empty();
}

std::vector<UnknownKey> unknown_keys(const toml::table& root, const std::vector<KeySpec>& schema) {
  std::vector<UnknownKey> found;
  check_table(root, "", schema, found);
  std::stable_sort(found.begin(), found.end(),
                   [](const UnknownKey& a, const UnknownKey& b) { return a.line < b.line; });
  return found;
}

// Optimal string alignment distance over two rows of the table and the one before.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto x = lower(a), y = lower(b);
  std::vector<std::size_t> before(y.size() + 1), previous(y.size() + 1), row(y.size() + 1);
  for (std::size_t j = 0; j <= y.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= x.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= y.size(); ++j) {
      const std::size_t cost = x[i - 1] == y[j - 1] ? 0 : 1;
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[y.size()];
}

bool is_host_compiler_name(std::string_view name) {
  for (std::string_view family : {"g++", "clang++"}) {
    if (!text::starts_with(name, family)) continue;
    const auto rest = name.substr(family.size());
    if (rest.empty()) return true;
    const auto digits = rest.substr(1);
    return rest.front() == '-' && !digits.empty() && digits.size() <= 3 &&
           digits.find_first_not_of("0123456789") == std::string_view::npos;
  }
  return false;
}

std::string raw_value_on_line(std::string_view text, std::size_t line) {
  const auto all = text::lines(text);
  if (line == 0 || line > all.size()) return {};
  const std::string_view content = all[line - 1];
  const auto equals = content.find('=');
  if (equals == std::string_view::npos) return {};
  auto value = content.substr(equals + 1);
  value = text::trim(value.substr(0, value.find('#')));
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front())
    value = value.substr(1, value.size() - 2);
  return text::printable(value);
}

}  // namespace cudaenv::project
