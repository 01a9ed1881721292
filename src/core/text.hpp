#pragma once
// Small string helpers shared by the parsers of machine files and tool output.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::text {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char separator);
// Splits on runs of spaces and tabs, dropping empty fields.
std::vector<std::string> split_whitespace(std::string_view s);
std::vector<std::string> lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains(std::string_view s, std::string_view needle);
// "/opt/cuda/bin/" → "/opt/cuda/bin"; "/" stays "/".
std::string without_trailing_slashes(std::string path);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// Parses a whole string as a non-negative decimal integer; nullopt on any other character.
std::optional<long long> parse_integer(std::string_view s);
// The word as a POSIX shell reads it back unchanged: left bare when it holds only safe
// characters, else single-quoted ('it'\''s').
std::string shell_quote(std::string_view word);
std::string shell_join(const std::vector<std::string>& words);

}  // namespace cudaenv::text
