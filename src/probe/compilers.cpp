#include "probe/compilers.hpp"

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/text.hpp"

namespace cudaenv::probe {

namespace {

// "gcc", "g++", "gcc-12", "g++-13", "clang", "clang++", "clang-14", "clang++-17".
std::optional<std::string> compiler_family(const std::string& name) {
  static const std::regex gcc(R"((gcc|g\+\+)(-[0-9]+)?)");
  static const std::regex clang(R"(clang(\+\+)?(-[0-9]+)?)");
  if (std::regex_match(name, gcc)) return "gcc";
  if (std::regex_match(name, clang)) return "clang";
  return std::nullopt;
}

std::optional<Version> query_version(ProcessRunner& runner, const Sysroot& sysroot,
                                     const std::string& path, const std::string& family) {
  std::vector<std::string> argv{sysroot.host_path(path).string()};
  if (family == "gcc") {
    argv.insert(argv.end(), {"-dumpfullversion", "-dumpversion"});
  } else {
    argv.emplace_back("--version");
  }
  auto result = runner.run(Command{argv, std::nullopt, std::chrono::milliseconds(5000)});
  if (!result || !result->succeeded()) return std::nullopt;
  return parse_compiler_version(result->out);
}

// PATH's absolute entries, in order: a relative one would make the current directory choose.
std::vector<std::string> absolute_path_entries(const Environment& env) {
  auto entries = text::split(env.get("PATH").value_or(""), ':');
  std::erase_if(entries,
                [](const std::string& entry) { return entry.empty() || entry.front() != '/'; });
  return entries;
}

}  // namespace

std::optional<Version> parse_compiler_version(std::string_view output) {
  // clang: "Debian clang version 14.0.6", "clang version 18.1.3 (...)"; gcc: "12.2.0".
  static const std::regex clang_line(R"(clang version ([0-9]+(\.[0-9]+)*))");
  const std::string text(output);
  std::smatch match;
  if (std::regex_search(text, match, clang_line)) return Version::parse(match[1].str());
  const auto first = text::lines(text);
  if (first.empty()) return std::nullopt;
  return Version::parse(text::trim(first.front()));
}

std::optional<Version> default_gcc_version(const Sysroot& sysroot, ProcessRunner& runner,
                                           const Environment& env) {
  for (const auto& directory : absolute_path_entries(env)) {
    const auto path = directory + "/gcc";
    if (!sysroot.is_executable_file(path)) continue;
    return query_version(runner, sysroot, sysroot.canonical(path).value_or(path), "gcc");
  }
  return std::nullopt;
}

std::vector<CompilerFacts> probe_compilers(const Sysroot& sysroot, ProcessRunner& runner,
                                           const Environment& env) {
  std::vector<CompilerFacts> compilers;
  std::set<std::string> seen_names;
  std::map<std::string, std::optional<Version>> version_of_file;
  for (const auto& directory : absolute_path_entries(env)) {
    for (const auto& name : sysroot.list_directory(directory)) {
      const auto family = compiler_family(name);
      if (!family || seen_names.count(name) > 0) continue;  // earlier PATH entries win
      const auto path = directory + "/" + name;
      if (!sysroot.is_executable_file(path)) continue;
      seen_names.insert(name);
      // gcc -> gcc-12 -> x86_64-linux-gnu-gcc-12: report each name, query each file once.
      const auto real = sysroot.canonical(path).value_or(path);
      auto cached = version_of_file.find(real);
      if (cached == version_of_file.end()) {
        // Run the file the links lead to inside the root: the kernel would follow an absolute
        // link (gcc -> /etc/alternatives/gcc) to the host's compiler instead.
        cached = version_of_file.emplace(real, query_version(runner, sysroot, real, *family)).first;
      }
      compilers.push_back(CompilerFacts{name, *family, path, cached->second});
    }
  }
  return compilers;
}

}  // namespace cudaenv::probe
