#include "core/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace cudaenv::text {

std::string_view trim(std::string_view s) {
  const auto* space = " \t\r\n";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(space);
  return s.substr(first, last - first + 1);
}

std::vector<std::string> split(std::string_view s, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const auto end = s.find(separator, start);
    parts.emplace_back(s.substr(start, end == std::string_view::npos ? s.npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::vector<std::string> split_whitespace(std::string_view s) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) fields.emplace_back(s.substr(start, i - start));
  }
  return fields;
}

std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::vector<std::string> lines(std::string_view s) {
  std::vector<std::string> result = split(s, '\n');
  if (!result.empty() && result.back().empty()) result.pop_back();
  for (auto& line : result) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  return result;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::optional<long long> parse_integer(std::string_view s) {
  if (s.empty()) return std::nullopt;
  long long value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

std::string shell_quote(std::string_view word) {
  constexpr std::string_view safe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-";
  if (!word.empty() && word.find_first_not_of(safe) == std::string_view::npos) {
    return std::string(word);
  }
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  quoted.reserve(words.size());
  for (const auto& word : words) quoted.push_back(shell_quote(word));
  return join(quoted, " ");
}

namespace {

// What a first byte says of a valid UTF-8 sequence (no overlong forms, no surrogates, nothing
// past U+10FFFF).
struct Utf8Lead {
  size_t length;                    // 0: not the first byte of a valid sequence
  unsigned char second_low = 0x80;  // the range the second byte must fall in
  unsigned char second_high = 0xbf;
};

Utf8Lead utf8_lead(unsigned char lead) {
  if (lead >= 0xc2 && lead <= 0xdf) return {2};
  if (lead == 0xe0) return {3, 0xa0, 0xbf};  // no overlong forms
  if (lead == 0xed) return {3, 0x80, 0x9f};  // no surrogates
  if (lead >= 0xe1 && lead <= 0xef) return {3};
  if (lead == 0xf0) return {4, 0x90, 0xbf};
  if (lead >= 0xf1 && lead <= 0xf3) return {4};
  if (lead == 0xf4) return {4, 0x80, 0x8f};  // nothing past U+10FFFF
  return {0};
}

// The length of the valid UTF-8 sequence starting at s[i], or 0.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto lead = utf8_lead(byte(0));
  if (lead.length == 0 || i + lead.length > s.size()) return 0;
  if (byte(1) < lead.second_low || byte(1) > lead.second_high) return 0;
  for (size_t k = 2; k < lead.length; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xbf) return 0;
  }
  return lead.length;
}

void append_hex(std::string& out, unsigned char c) {
  static constexpr char digits[] = "0123456789abcdef";
  out += "\\x";
  out += digits[c >> 4];
  out += digits[c & 0xf];
}

// One character starting at s[i], escaped when a terminal would act on it; returns its length.
size_t append_printable(std::string& out, std::string_view s, size_t i, LineBreaks line_breaks) {
  const auto c = static_cast<unsigned char>(s[i]);
  if ((c >= 0x20 && c < 0x7f) || (c == '\n' && line_breaks == LineBreaks::keep)) {
    out += static_cast<char>(c);
    return 1;
  }
  const size_t length = c < 0x80 ? 0 : utf8_sequence_length(s, i);
  if (length == 0) {  // C0 controls, DEL, and bytes that are not valid UTF-8
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else
      append_hex(out, c);
    return 1;
  }
  // U+0080..U+009F, the C1 controls (CSI among them), encoded as C2 80..C2 9F.
  if (length == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
    append_hex(out, c);
    append_hex(out, static_cast<unsigned char>(s[i + 1]));
    return 2;
  }
  out.append(s.substr(i, length));
  return length;
}

}  // namespace

std::string printable(std::string_view text, size_t limit, LineBreaks line_breaks) {
  std::string out;
  out.reserve(std::min(text.size(), limit) + 16);
  size_t i = 0;
  while (i < text.size() && i < limit) i += append_printable(out, text, i, line_breaks);
  if (i < text.size()) out += "…[+" + std::to_string(text.size() - i) + " bytes]";
  return out;
}

std::vector<std::string> gpu_name_words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  const auto flush = [&] {
    if (!word.empty() && word != "NVIDIA" && word != "GEFORCE" && word != "TESLA")
      words.push_back(word);
    word.clear();
  };
  for (const char c : name) {
    if (c == ' ' || c == '-' || c == '\t')
      flush();
    else
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  flush();
  return words;
}

bool gpu_is_model(std::string_view device, std::string_view model) {
  const auto device_words = gpu_name_words(device);
  const auto model_words = gpu_name_words(model);
  return !model_words.empty() && model_words.size() <= device_words.size() &&
         std::equal(model_words.begin(), model_words.end(), device_words.begin());
}

}  // namespace cudaenv::text
