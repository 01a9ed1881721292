#include "project/project_file.hpp"

#include <cctype>

#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/text.hpp"
#include "core/toml_guard.hpp"

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

Result<std::optional<VersionSpec>> spec_field(const toml::table& table, const char* key,
                                              const std::string& path) {
  const auto* node = table.get(key);
  if (node == nullptr) return std::optional<VersionSpec>{};
  const auto line = node->source().begin.line;
  const auto value = node->value<std::string>();
  if (!value)
    return file_error(path, line, std::string(key) + " must be a quoted version such as \"12.1\"");
  auto spec = VersionSpec::parse(*value);
  if (!spec) return file_error(path, line, std::string(key) + ": " + spec.error().message);
  return std::optional<VersionSpec>{*spec};
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
  auto cuda = spec_field(root, "cuda", path);
  if (!cuda) return cuda.error();
  auto cudnn = spec_field(root, "cudnn", path);
  if (!cudnn) return cudnn.error();
  file.cuda = *cuda;
  file.cudnn = *cudnn;
  if (const auto* frameworks = root.get_as<toml::table>("frameworks")) {
    for (const auto& [key, value] : *frameworks) {
      (void)value;
      auto spec = spec_field(*frameworks, std::string(key.str()).c_str(), path);
      if (!spec) return spec.error();
      if (*spec) file.frameworks.emplace(std::string(key.str()), **spec);
    }
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

}  // namespace cudaenv::project
