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

// A GPU's device or model name as upper-case words, split at spaces, tabs and hyphens, without
// the vendor and brand words NVML and the kernel put in front: "NVIDIA A100-SXM4-80GB" gives
// {A100, SXM4, 80GB}; "Tesla T4" gives {T4}.
std::vector<std::string> gpu_name_words(std::string_view name);
// Whether the device `device` is the model `model`: the model's words begin the device's.
bool gpu_is_model(std::string_view device, std::string_view model);

// How printable() treats line breaks: a value shown inside one line escapes them (a name read
// from a file cannot forge a second "hint:" line); a block of several lines keeps them.
enum class LineBreaks { escape, keep };
// The longest value printable() shows before it cuts: a version, a key, a name.
constexpr size_t printable_limit = 200;
// The cut for a whole message or a path, which may hold several values.
constexpr size_t message_limit = 1024;
// Text read from files, the network or the environment, made safe to show on a terminal:
// control characters (C0, DEL, C1 — raw or UTF-8 encoded) become \xNN (or \n, \t, \r), bytes
// that are not valid UTF-8 become \xNN, and text beyond `limit` bytes is cut and marked
// ("…[+N bytes]"). No terminal escape sequence survives it; valid UTF-8 stays readable.
std::string printable(std::string_view text, size_t limit = printable_limit,
                      LineBreaks line_breaks = LineBreaks::escape);

}  // namespace cudaenv::text
