#include "project/project_file.hpp"

#include <algorithm>
#include <cctype>

#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/text.hpp"
#include "core/toml_guard.hpp"
#include "core/untrusted.hpp"
#include "project/schema.hpp"

namespace cudaenv::project {

namespace fs = std::filesystem;

namespace {

Error file_error(const std::string& path, std::size_t line, const std::string& problem) {
  return make_error(ErrorKind::usage, path + ":" + std::to_string(line) + ": " + problem,
                    "write e.g. cuda = \"12.1\" (or just 12.1) in " + path);
}

// `[table]` or `key = value` (key: a letter or '_', then letters, digits, '_' or '-'). Written
// out by hand: this runs at every directory change, and compiling a std::regex costs more than
// everything else the prompt hook does.
bool is_toml_line(std::string_view content) {
  if (content.front() == '[') return true;
  const auto is_key_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  };
  if (std::isalpha(static_cast<unsigned char>(content.front())) == 0 && content.front() != '_')
    return false;
  std::size_t end = 1;
  while (end < content.size() && is_key_char(content[end])) ++end;
  const auto rest = text::trim(content.substr(end));
  return !rest.empty() && rest.front() == '=';
}

}  // namespace

// A line of the form `key = value` or `[table]` makes the file TOML.
std::optional<std::string> bare_version(std::string_view text) {
  std::optional<std::string> found;
  for (const auto& line : text::lines(text)) {
    const auto content = std::string(text::trim(line.substr(0, line.find('#'))));
    if (content.empty()) continue;
    if (found || is_toml_line(content)) return std::nullopt;
    found = content;
  }
  return found;
}

namespace {

// `key = "value"` with the value as written on `line`, for a hint ("write cuda = \"13.0\"").
std::string written_as(std::string_view text, std::size_t line, std::string_view key) {
  const auto raw = raw_value_on_line(text, line);
  return std::string(key) + " = \"" + (raw.empty() ? "12.1" : raw) + "\"";
}

Result<std::optional<VersionSpec>> spec_field(const toml::table& table, std::string_view key,
                                              std::string_view text, const std::string& path) {
  const auto* node = table.get(key);
  if (node == nullptr) return std::optional<VersionSpec>{};
  const auto line = node->source().begin.line;
  const auto value = node->value<std::string>();
  if (!value)
    return make_error(ErrorKind::usage,
                      path + ":" + std::to_string(line) + ": " + std::string(key) +
                          " must be a quoted version such as \"12.1\"",
                      "write " + written_as(text, line, key));
  auto spec = VersionSpec::parse(*value);
  if (!spec) return file_error(path, line, std::string(key) + ": " + spec.error().message);
  return std::optional<VersionSpec>{*spec};
}

// `host_compiler = "g++-11"`: a compiler's program name, never a path.
Result<std::string> host_compiler_field(const toml::table& root, std::string_view text,
                                        const std::string& path) {
  const auto* node = root.get("host_compiler");
  if (node == nullptr) return std::string();
  const auto value = node->value<std::string>();
  if (value && is_host_compiler_name(*value)) return *value;
  const auto line = node->source().begin.line;
  return make_error(ErrorKind::usage,
                    path + ":" + std::to_string(line) +
                        ": host_compiler must name a compiler program such as \"g++-11\" or "
                        "\"clang++-14\", not \"" +
                        raw_value_on_line(text, line) + "\"",
                    "write host_compiler = \"g++-11\" (looked up on PATH; a path is refused)");
}

// `venv = ".venv"`: a directory below the project's own, never a path that leaves it (the file
// comes with the repository; what `sync` runs from there is checked again when it runs).
Result<std::string> venv_field(const toml::table& root, std::string_view text,
                               const std::string& path) {
  const auto* node = root.get("venv");
  if (node == nullptr) return std::string();
  const auto value = node->value<std::string>();
  if (value &&
      untrusted::is_valid(untrusted::Field::relative_path, text::without_trailing_slashes(*value)))
    return text::without_trailing_slashes(*value);
  const auto line = node->source().begin.line;
  return make_error(ErrorKind::usage,
                    path + ":" + std::to_string(line) +
                        ": venv must be a relative path inside the project such as \".venv\", "
                        "not " +
                        text::printable(raw_value_on_line(text, line), text::message_limit),
                    "write venv = \".venv\" (no \"..\", not absolute: the environment lies "
                    "below the directory of .cudaenv)");
}

// A companion's key is a distribution name as an index spells it: it forms a URL and a pip
// requirement later, so nothing else passes (no extras, no spaces, no path).
Status check_companion_name(std::string_view name, const toml::node& node,
                            const std::string& path) {
  if (untrusted::is_valid(untrusted::Field::python_package, name) &&
      name.find('[') == std::string_view::npos)
    return Ok{};
  return make_error(ErrorKind::usage,
                    path + ":" + std::to_string(node.source().begin.line) + ": frameworks: \"" +
                        text::printable(name) +
                        "\" is not a package name (PEP 503: letters, digits and -, _, . between "
                        "them)",
                    "write the companion as its index names it, such as flash-attn = \"2.7\"");
}

struct FrameworkPins {
  std::map<std::string, VersionSpec> frameworks;
  std::map<std::string, VersionSpec> companions;
};

Result<FrameworkPins> framework_pins(const toml::table& root, std::string_view text,
                                     const std::string& path) {
  FrameworkPins pins;
  const auto* node = root.get("frameworks");
  if (node == nullptr) return pins;
  const auto* frameworks = node->as_table();
  if (frameworks == nullptr)
    return file_error(path, node->source().begin.line,
                      "frameworks must be a table: a [frameworks] line, then torch = \"2.3\"");
  for (const auto& entry : *frameworks) {  // every value a spec, known framework or not
    const std::string_view name = entry.first.str();
    auto pin = spec_field(*frameworks, name, text, path);
    if (!pin) return pin.error();
    const auto& known = project_file_keys();
    const bool is_known = std::any_of(known.begin(), known.end(), [name](const KeySpec& spec) {
      return spec.table == "frameworks" && spec.key == name;
    });
    if (*pin && is_known) pins.frameworks.emplace(std::string(name), **pin);
    if (*pin && !is_known && is_companion_key(name)) {
      if (auto ok = check_companion_name(name, entry.second, path); !ok) return ok.error();
      pins.companions.emplace(std::string(name), **pin);
    }
  }
  return pins;
}

// A key nobody reads, in a file that pins no CUDA version: refused, so that the system toolkit
// is not silently used in place of what the file meant.
Error refused_key(const UnknownKey& unknown, std::string_view text, const std::string& path) {
  const auto where = path + ":" + std::to_string(unknown.line) + ": ";
  const auto hint = unknown.suggests_cuda
                        ? "write " + written_as(text, unknown.line, "cuda") + " on line " +
                              std::to_string(unknown.line)
                        : std::string(
                              "a .cudaenv without a valid cuda key must not hold unknown "
                              "keys: nothing was activated; fix the key, or add cuda = "
                              "\"12.1\"");
  return make_error(ErrorKind::usage, where + unknown.problem + "; " + unknown.suggestion, hint);
}

Error ignored_key(const UnknownKey& unknown, const std::string& path) {
  return make_error(ErrorKind::usage, path + ":" + std::to_string(unknown.line) + ": " +
                                          unknown.problem + " (ignored); " + unknown.suggestion);
}

}  // namespace

Result<ProjectFile> parse_project_file(std::string_view text, const std::string& path) {
  ProjectFile file;
  if (auto bare = bare_version(text)) {
    auto spec = VersionSpec::parse(*bare);
    if (!spec) return file_error(path, 1, spec.error().message);
    file.cuda = *spec;
    return file;
  }
  if (const auto bad = toml_text_problem(text)) return file_error(path, bad->line, bad->problem);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return file_error(path, e.source().begin.line, std::string(e.description()));
  }
  auto cuda = spec_field(root, "cuda", text, path);
  if (!cuda) return cuda.error();
  auto cudnn = spec_field(root, "cudnn", text, path);
  if (!cudnn) return cudnn.error();
  auto frameworks = framework_pins(root, text, path);
  if (!frameworks) return frameworks.error();
  auto host_compiler = host_compiler_field(root, text, path);
  if (!host_compiler) return host_compiler.error();
  file.host_compiler = std::move(*host_compiler);
  auto venv = venv_field(root, text, path);
  if (!venv) return venv.error();
  file.venv = std::move(*venv);
  file.cuda = *cuda;
  file.cudnn = *cudnn;
  file.frameworks = std::move(frameworks->frameworks);
  file.companions = std::move(frameworks->companions);
  auto targets = targets_in(root, path);
  if (!targets) return targets.error();
  file.targets = std::move(*targets);
  for (const auto& unknown : unknown_keys(root, project_file_keys())) {
    if (!file.cuda) return refused_key(unknown, text, path);
    file.warnings.push_back(ignored_key(unknown, path));
  }
  return file;
}

Result<ProjectFile> read_project_file(const fs::path& path) {
  const auto text = read_small_file(path);
  if (!text)
    return make_error(ErrorKind::failure, text.error().message, "make it a small text file");
  return parse_project_file(*text, path.string());
}

std::optional<fs::path> find_project_file(const fs::path& start) {
  std::error_code ec;
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    const auto candidate = dir / project_file_name;
    if (fs::exists(candidate, ec)) return candidate;  // a FIFO too: reading it says what is wrong
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

std::optional<VersionSpec> framework_pin(const ProjectFile& file, const std::string& name) {
  const auto it = file.frameworks.find(name);
  return it == file.frameworks.end() ? std::nullopt : std::optional<VersionSpec>(it->second);
}

}  // namespace cudaenv::project
