#include "core/untrusted.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "core/text.hpp"

namespace cudaenv::untrusted {

namespace {

constexpr std::size_t max_name_length = 128;
constexpr std::size_t max_path_length = 1024;
constexpr std::size_t max_url_length = 2048;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Letters, digits and ". _ + -", not starting with "." or "-" (no hidden name, no option), never
// holding "..": such a name is one path component and one shell word as it stands.
bool is_name(std::string_view value) {
  if (value.empty() || value.size() > max_name_length) return false;
  if (value.front() == '.' || value.front() == '-') return false;
  if (value.find("..") != std::string_view::npos) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return is_alnum(c) || c == '.' || c == '_' || c == '+' || c == '-';
  });
}

bool is_release_version(std::string_view value) {
  constexpr int max_parts = 4;
  constexpr std::size_t max_digits = 6;
  int parts = 0;
  for (const auto& part : text::split(value, '.')) {
    if (++parts > max_parts || part.empty() || part.size() > max_digits) return false;
    if (!std::all_of(part.begin(), part.end(), is_digit)) return false;
  }
  return parts > 0;
}

bool is_component_version(std::string_view value) {
  return is_name(value) && is_digit(value.front());
}

// Each component a name (so no "", ".", ".." or percent escape: "%" is not a name character),
// separated by single slashes, not absolute.
bool is_relative_path(std::string_view value) {
  if (value.empty() || value.size() > max_path_length) return false;
  for (const auto& part : text::split(value, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
    const bool name_like = std::all_of(part.begin(), part.end(), [](char c) {
      return is_alnum(c) || c == '.' || c == '_' || c == '+' || c == '-' || c == '~';
    });
    if (!name_like || part.front() == '-') return false;
  }
  return true;
}

bool is_gpu_arch(std::string_view value) {
  if (!text::starts_with(value, "sm_")) return false;
  std::string_view rest = value.substr(3);
  if (!rest.empty() && rest.back() >= 'a' && rest.back() <= 'z') rest.remove_suffix(1);
  return (rest.size() == 2 || rest.size() == 3) && std::all_of(rest.begin(), rest.end(), is_digit);
}

int number(std::string_view digits) {
  int out = 0;
  for (const char c : digits) out = out * 10 + (c - '0');
  return out;
}

bool is_date(std::string_view value) {
  if (value.size() != 10 || value[4] != '-' || value[7] != '-') return false;
  for (const std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!is_digit(value[i])) return false;
  const int year = number(value.substr(0, 4));
  const int month = number(value.substr(5, 2));
  const int day = number(value.substr(8, 2));
  constexpr std::array<int, 12> days = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 2000 || month < 1 || month > 12 || day < 1 || day > days[month - 1]) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return !(month == 2 && day == 29 && !leap);
}

bool is_revision(std::string_view value) {
  constexpr std::size_t max_serial_digits = 4;
  if (!is_date(value.substr(0, 10))) return false;
  if (value.size() == 10) return true;
  const std::string_view serial = value.substr(10);
  return serial.size() >= 2 && serial.size() <= 1 + max_serial_digits && serial.front() == '.' &&
         std::all_of(serial.begin() + 1, serial.end(), is_digit);
}

bool is_sha256(std::string_view value) {
  return value.size() == 64 && std::all_of(value.begin(), value.end(), is_lower_hex);
}

bool is_url(std::string_view value) {
  if (value.size() > max_url_length) return false;
  if (!text::starts_with(value, "https://") && !text::starts_with(value, "http://") &&
      !text::starts_with(value, "file://"))
    return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte < 0x7f && c != '"' && c != '\'' && c != '\\' && c != '`' &&
           c != '<' && c != '>' && c != '{' && c != '}' && c != '|' && c != '^' && c != '$';
  });
}

// Digits without a sign, a point, an exponent or a leading zero, up to max_download_size.
bool is_byte_size(std::string_view value) {
  constexpr std::size_t max_digits = 11;  // 68719476736
  if (value.empty() || value.size() > max_digits) return false;
  if (!std::all_of(value.begin(), value.end(), is_digit)) return false;
  if (value.size() > 1 && value.front() == '0') return false;
  std::uint64_t bytes = 0;
  for (const char c : value) bytes = bytes * 10 + static_cast<std::uint64_t>(c - '0');
  return bytes <= max_download_size;
}

// A PEP 508 name: letters and digits, with . _ - only between them (so never an option, never a
// path step), which PEP 503 normalises to the project's index name.
bool is_python_name(std::string_view value) {
  if (value.empty() || value.size() > max_name_length) return false;
  if (!is_alnum(value.front()) || !is_alnum(value.back())) return false;
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; });
}

// A name and optional extras, "jax[cuda12]" or "pkg[a,b]": what pip reads as one requirement head.
bool is_python_package(std::string_view value) {
  const auto open = value.find('[');
  if (open == std::string_view::npos) return is_python_name(value);
  if (value.back() != ']' || !is_python_name(value.substr(0, open))) return false;
  const auto extras = value.substr(open + 1, value.size() - open - 2);
  const auto parts = text::split(extras, ',');
  return !parts.empty() && std::all_of(parts.begin(), parts.end(), [](const std::string& extra) {
    return is_python_name(extra);
  });
}

// A GPU model as people write it: letters and digits, with single spaces, '-', '.' and '/'
// between them; at most 48 characters.
bool is_gpu_model(std::string_view value) {
  if (value.empty() || value.size() > 48) return false;
  if (!is_alnum(value.front()) || !is_alnum(value.back())) return false;
  if (value.find("  ") != std::string_view::npos) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return is_alnum(c) || c == ' ' || c == '-' || c == '.' || c == '/';
  });
}

}  // namespace

std::string_view describe(Field field) {
  switch (field) {
    case Field::release_version: return "a release version (numbers and dots, like 12.4.1)";
    case Field::component_version: return "a component version (like 12.4.127)";
    case Field::component_name: return "a name (letters, digits and . _ + -, like cuda_nvcc)";
    case Field::relative_path: return "a relative path (names and single slashes, no ..)";
    case Field::gpu_arch: return "a GPU architecture (like sm_90 or sm_90a)";
    case Field::date: return "a date (YYYY-MM-DD)";
    case Field::revision: return "a database revision (a date and an optional .N)";
    case Field::sha256: return "a sha256 (64 lowercase hex digits)";
    case Field::url: return "a URL (http, https or file, without spaces or quotes)";
    case Field::byte_size: return "a size in bytes (a whole number from 0 to 68719476736, 64 GiB)";
    case Field::python_package:
      return "a Python package name with optional [extras] (like torch or jax[cuda12])";
    case Field::gpu_model: return "a GPU model (letters, digits, spaces and - . /, like RTX 4090)";
  }
  return "a valid value";
}

bool is_valid(Field field, std::string_view value) {
  switch (field) {
    case Field::release_version: return is_release_version(value);
    case Field::component_version: return is_component_version(value);
    case Field::component_name: return is_name(value);
    case Field::relative_path: return is_relative_path(value);
    case Field::gpu_arch: return is_gpu_arch(value);
    case Field::date: return is_date(value);
    case Field::revision: return is_revision(value);
    case Field::sha256: return is_sha256(value);
    case Field::url: return is_url(value);
    case Field::byte_size: return is_byte_size(value);
    case Field::python_package: return is_python_package(value);
    case Field::gpu_model: return is_gpu_model(value);
  }
  return false;
}

Status check(Field field, std::string_view value, std::string_view where, ErrorKind kind) {
  if (is_valid(field, value)) return Ok{};
  return make_error(
      kind,
      std::string(where) + ": \"" + text::printable(value) + "\" is not " +
          std::string(describe(field)),
      "the file or mirror is corrupt or hostile: regenerate it or use another source");
}

Result<std::uint64_t> byte_size(std::string_view value, std::string_view where, ErrorKind kind) {
  if (auto checked = check(Field::byte_size, value, where, kind); !checked) return checked.error();
  std::uint64_t bytes = 0;
  for (const char c : value) bytes = bytes * 10 + static_cast<std::uint64_t>(c - '0');
  return bytes;
}

}  // namespace cudaenv::untrusted
