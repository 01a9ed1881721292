#include "activate/host_compiler.hpp"

#include <charconv>
#include <filesystem>
#include <vector>

#include "core/files.hpp"
#include "core/process.hpp"
#include "core/text.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

namespace {

// How far below the newest accepted major to look for an installed g++-M.
constexpr int majors_to_try = 8;

std::optional<int> number_at(std::string_view text) {
  int value = 0;
  const auto* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop == text.data() || value <= 0 || value > 999) return std::nullopt;
  return value;
}

// PATH without its relative entries (an empty one means the current directory): a compiler
// named in CUDAHOSTCXX is run by every build, so it never comes from the directory a cloned
// repository put you in.
std::string absolute_entries(std::string_view path) {
  std::vector<std::string> kept;
  for (auto& entry : text::split(path, ':')) {
    if (!entry.empty() && entry.front() == '/') kept.push_back(std::move(entry));
  }
  return text::join(kept, ":");
}

}  // namespace

std::optional<int> newest_supported_gcc(const std::string& prefix) {
  auto header = read_small_file(fs::path(prefix) / "include" / "crt" / "host_config.h");
  if (!header) return std::nullopt;
  constexpr std::string_view check = "#if __GNUC__ > ";
  const auto at = header->find(check);
  if (at == std::string::npos) return std::nullopt;
  return number_at(std::string_view(*header).substr(at + check.size()));
}

std::optional<int> gcc_major_in_name(std::string_view file_name) {
  constexpr std::string_view driver = "g++-";
  const auto at = file_name.rfind(driver);
  // g++-N itself, or a cross/target prefix (x86_64-linux-gnu-g++-N); not clang++-N.
  if (at == std::string_view::npos || (at > 0 && file_name[at - 1] != '-')) return std::nullopt;
  const auto digits = file_name.substr(at + driver.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return number_at(digits);
}

std::optional<std::string> needed_host_compiler(const Environment& env, const std::string& prefix) {
  if (env.get("CUDAHOSTCXX")) return std::nullopt;
  const auto path = absolute_entries(env.get("PATH").value_or(""));
  const auto default_compiler = find_in_path("c++", path);
  if (!default_compiler) return std::nullopt;
  std::error_code ec;
  const auto resolved = fs::canonical(*default_compiler, ec);
  if (ec) return std::nullopt;
  const auto default_major = gcc_major_in_name(resolved.filename().string());
  if (!default_major) return std::nullopt;
  const auto newest = newest_supported_gcc(prefix);
  if (!newest || *default_major <= *newest) return std::nullopt;
  for (int major = *newest; major > *newest - majors_to_try && major > 0; --major) {
    if (auto found = find_in_path("g++-" + std::to_string(major), path)) return found;
  }
  return std::nullopt;
}

}  // namespace cudaenv::activate
