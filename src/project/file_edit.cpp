#include "project/file_edit.hpp"

#include <optional>
#include <vector>

#include "core/text.hpp"
#include "project/project_file.hpp"

namespace cudaenv::project {

namespace {

std::string_view without_comment(std::string_view line) {
  return text::trim(line.substr(0, line.find('#')));
}

// "[frameworks]" → "frameworks"; nullopt for any other line.
std::optional<std::string> table_header(std::string_view line) {
  const auto content = without_comment(line);
  if (content.size() < 2 || content.front() != '[' || content.back() != ']') return std::nullopt;
  return std::string(text::trim(content.substr(1, content.size() - 2)));
}

bool assigns_key(std::string_view line, std::string_view key) {
  const auto content = without_comment(line);
  if (!text::starts_with(content, key)) return false;
  const auto rest = text::trim(content.substr(key.size()));
  return !rest.empty() && rest.front() == '=';
}

// A TOML basic string: quotes and backslashes escaped, control characters as \uXXXX.
std::string toml_string(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

// The index after the last non-blank line of the table that starts at `begin` and ends at `end`.
std::size_t end_of_content(const std::vector<std::string>& lines, std::size_t begin,
                           std::size_t end) {
  std::size_t last = begin;
  for (std::size_t i = begin; i < end; ++i) {
    if (!text::trim(lines[i]).empty()) last = i + 1;
  }
  return last;
}

}  // namespace

std::string set_string_key(std::string_view text, std::string_view table, std::string_view key,
                           std::string_view value) {
  auto lines = text::lines(text);
  const auto assignment = std::string(key) + " = " + toml_string(value);
  std::string current_table;
  std::optional<std::size_t> table_begin =
      table.empty() ? std::optional<std::size_t>(0) : std::nullopt;
  std::optional<std::size_t> table_end;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (auto header = table_header(lines[i])) {
      if (current_table == table && table_begin && !table_end) table_end = i;
      current_table = *header;
      if (current_table == table) table_begin = i + 1;
      continue;
    }
    if (current_table == table && assigns_key(lines[i], key)) {
      const auto comment = lines[i].find('#');  // a trailing comment on the line stays
      lines[i] =
          comment == std::string::npos ? assignment : assignment + "  " + lines[i].substr(comment);
      return joined(lines);
    }
  }
  if (!table_begin) {
    if (!lines.empty() && !text::trim(lines.back()).empty()) lines.emplace_back("");
    lines.push_back("[" + std::string(table) + "]");
    lines.push_back(assignment);
    return joined(lines);
  }
  const auto end = table_end.value_or(lines.size());
  const auto at = end_of_content(lines, *table_begin, end);
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), assignment);
  return joined(lines);
}

std::string bare_version_as_toml(std::string_view text) {
  if (!bare_version(text)) return std::string(text);
  auto lines = text::lines(text);
  for (auto& line : lines) {
    const auto content = without_comment(line);
    if (content.empty()) continue;
    // The one version line: what follows the version (blanks, a comment) stays as written.
    const auto after_version = line.find(content) + content.size();
    const auto comment = line.find('#');
    const auto tail = comment == std::string::npos ? std::string() : line.substr(after_version);
    line = "cuda = " + toml_string(content) + tail;
  }
  return joined(lines);
}

std::optional<std::string> remove_key(std::string_view text, std::string_view table,
                                      std::string_view key) {
  auto lines = text::lines(text);
  std::string current_table;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (auto header = table_header(lines[i])) {
      current_table = *header;
    } else if (current_table == table && assigns_key(lines[i], key)) {
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
      return joined(lines);
    }
  }
  return std::nullopt;
}

bool has_settings(std::string_view text) {
  for (const auto& line : text::lines(text)) {
    if (!without_comment(line).empty()) return true;
  }
  return false;
}

}  // namespace cudaenv::project
