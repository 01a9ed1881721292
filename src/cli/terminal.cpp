#include "cli/terminal.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <ostream>
#include <streambuf>

namespace cudaenv::cli {

bool colour_wanted(int fd, const Environment& env) {
  if (env.get("NO_COLOR")) return false;
  const auto term = env.get("TERM");
  return ::isatty(fd) == 1 && (!term || *term != "dumb");
}

bool progress_wanted(const Environment& env) {
  if (const auto forced = env.get("CUDAENV_PROGRESS")) return *forced == "1";
  const auto term = env.get("TERM");
  return ::isatty(2) == 1 && (!term || *term != "dumb");
}

bool progress_wanted(const Context& context) {
  return !context.quiet && progress_wanted(context.env);
}

std::ostream& notes(Context& context) {
  // A stream with no buffer drops what is written to it.
  static std::ostream nowhere(nullptr);
  return context.quiet ? nowhere : context.err;
}

std::string styled(std::string_view text, Tone tone, bool colour) {
  if (!colour || tone == Tone::plain) return std::string(text);
  const char* code = "";
  switch (tone) {
    case Tone::heading: code = "\033[1m"; break;
    case Tone::good: code = "\033[32m"; break;
    case Tone::warn: code = "\033[33m"; break;
    case Tone::bad: code = "\033[31m"; break;
    case Tone::dim: code = "\033[2m"; break;
    case Tone::plain: break;
  }
  return std::string(code) + std::string(text) + "\033[0m";
}

std::string human_bytes(unsigned long long bytes) {
  static const std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < units.size()) {
    value /= 1024.0;
    ++unit;
  }
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), unit == 0 ? "%.0f %s" : "%.1f %s", value,
                units[unit]);
  return buffer.data();
}

}  // namespace cudaenv::cli
