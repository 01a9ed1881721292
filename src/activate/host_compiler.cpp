#include "activate/host_compiler.hpp"

#include <charconv>
#include <filesystem>
#include <vector>

#include "core/files.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "core/version.hpp"

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

bool names_ccbin(std::string_view flags) {
  for (const auto& word : text::split_whitespace(flags)) {
    if (word == "-ccbin" || text::starts_with(word, "--compiler-bindir") ||
        text::starts_with(word, "-ccbin="))
      return true;
  }
  return false;
}

// The variable through which the user already chose a host compiler, if any.
std::string own_variable(const Environment& env, bool ccbin_read) {
  if (env.get_nonempty("CUDAHOSTCXX")) return "CUDAHOSTCXX";
  if (ccbin_read && env.get_nonempty("NVCC_CCBIN")) return "NVCC_CCBIN";
  return "-ccbin in NVCC_PREPEND_FLAGS";
}

std::optional<std::optional<std::string>> users_own_choice(const Environment& env,
                                                           bool ccbin_read) {
  if (auto cxx = env.get_nonempty("CUDAHOSTCXX")) return cxx;
  if (auto ccbin = env.get_nonempty("NVCC_CCBIN"); ccbin && ccbin_read) return ccbin;
  if (names_ccbin(env.get("NVCC_PREPEND_FLAGS").value_or(""))) return std::optional<std::string>();
  return std::nullopt;
}

// Said first when the user set NVCC_CCBIN for a toolkit whose nvcc never reads it.
std::string ignored_ccbin_note(const Environment& env, std::string_view release) {
  const auto ccbin = env.get_nonempty("NVCC_CCBIN");
  if (!ccbin) return {};
  return "your NVCC_CCBIN (" + *ccbin + ") is ignored by nvcc " + std::string(release) +
         " (read from CUDA 12.5 on: set NVCC_PREPEND_FLAGS='-ccbin " + *ccbin + "' to choose it); ";
}

std::optional<std::string> newest_installed_gcc(int newest, const std::string& path) {
  for (int major = newest; major > newest - majors_to_try && major > 0; --major) {
    if (auto found = find_in_path("g++-" + std::to_string(major), path)) return found;
  }
  return std::nullopt;
}

// A project's host_compiler pin: a program name looked up on PATH (never a path the project
// file chose: a cloned repository does not pick which program every build runs).
HostCompilerChoice pinned_choice(const std::string& pinned, const std::string& path) {
  if (pinned.find('/') == std::string::npos) {
    if (auto found = find_in_path(pinned, path))
      return {found, pinned + ", pinned by the project's host_compiler key", "", false};
  }
  return {std::nullopt,
          pinned + " (the project's host_compiler) is not on PATH: sudo apt install " + pinned,
          pinned, false};
}

// The rules after the user's own choice: the project's pin, the default, the newest accepted.
HostCompilerChoice choose_by_rules(const Environment& env, const std::string& prefix,
                                   const std::string& pinned) {
  const auto path = absolute_entries(env.get("PATH").value_or(""));
  if (!pinned.empty()) return pinned_choice(pinned, path);
  const auto default_compiler = find_in_path("c++", path);
  if (!default_compiler) return {std::nullopt, "no c++ on PATH: nvcc's default stands", "", false};
  std::error_code ec;
  const auto resolved = fs::canonical(*default_compiler, ec);
  const auto name = ec ? std::string("c++") : resolved.filename().string();
  const auto default_major = gcc_major_in_name(name);
  const auto newest = newest_supported_gcc(prefix);
  if (!default_major || !newest)
    return {std::nullopt, "c++ is " + name + ": no GCC limit applies, nvcc's default stands", "",
            false};
  const auto limit = " (gcc <= " + std::to_string(*newest) + ", include/crt/host_config.h)";
  if (*default_major <= *newest)
    return {std::nullopt, "c++ is " + name + ", which this toolkit accepts" + limit, "", false};
  const auto refused = "c++ is " + name + ", newer than this toolkit accepts" + limit;
  if (auto found = newest_installed_gcc(*newest, path))
    return {found,
            refused + "; " + fs::path(*found).filename().string() +
                " is the newest accepted one on PATH",
            "", false};
  const auto package = "g++-" + std::to_string(*newest);
  return {std::nullopt, refused + "; no accepted g++ on PATH: sudo apt install " + package, package,
          false};
}

}  // namespace

bool honours_nvcc_ccbin(std::string_view release) {
  const auto version = Version::parse(release);
  if (!version) return true;
  return version->major_minor() >= *Version::parse("12.5");
}

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
  auto choice = choose_host_compiler(env, prefix);
  if (choice.user_choice) return std::nullopt;
  return choice.compiler;
}

HostCompilerChoice choose_host_compiler(const Environment& env, const std::string& prefix,
                                        const std::string& pinned, std::string_view release) {
  const bool ccbin_read = honours_nvcc_ccbin(release);
  if (auto own = users_own_choice(env, ccbin_read))
    return {*own, "your own " + own_variable(env, ccbin_read), "", true};
  auto choice = choose_by_rules(env, prefix, pinned);
  if (!ccbin_read) choice.reason = ignored_ccbin_note(env, release) + choice.reason;
  return choice;
}

std::string absent_pin_warning(const HostCompilerChoice& choice, const std::string& pinned,
                               const std::string& file) {
  if (pinned.empty() || choice.user_choice || choice.compiler) return {};
  // Debian names clang's packages clang-N; GCC's C++ driver g++-N is its own package.
  const auto package = text::starts_with(pinned, "clang++") ? "clang" + pinned.substr(7) : pinned;
  return file + ": host_compiler = \"" + pinned +
         "\" is not on PATH, so nvcc and CMake keep their default compiler; install it (sudo apt "
         "install " +
         package + ") or change host_compiler there";
}

std::string prepend_flags_with(const std::optional<std::string>& before,
                               const std::string& compiler) {
  const auto flag = "-ccbin " + compiler;
  return before && !before->empty() ? *before + " " + flag : flag;
}

bool is_prepended_ccbin(const std::optional<std::string>& before, std::string_view set_to) {
  const std::string lead = before && !before->empty() ? *before + " -ccbin " : "-ccbin ";
  if (!text::starts_with(set_to, lead)) return false;
  const auto compiler = set_to.substr(lead.size());
  return !compiler.empty() && compiler.find_first_of(" \t\n") == std::string_view::npos;
}

std::map<std::string, std::string> host_compiler_variables(const Environment& env,
                                                           const HostCompilerChoice& choice) {
  if (choice.user_choice || !choice.compiler) return {};
  std::map<std::string, std::string> variables{{"CUDAHOSTCXX", *choice.compiler}};
  // nvcc splits its flag variables at blanks: a path holding one cannot be passed that way.
  if (choice.compiler->find_first_of(" \t\n'\"\\") == std::string::npos)
    variables["NVCC_PREPEND_FLAGS"] =
        prepend_flags_with(env.get("NVCC_PREPEND_FLAGS"), *choice.compiler);
  return variables;
}

}  // namespace cudaenv::activate
