#pragma once
// A check run before text reaches toml++. Debian's toml++ 3.3 reaches __builtin_unreachable()
// (undefined behaviour; found by fuzz/fuzz_project_file) when it asks whether a character in
// U+00A1-U+0499, U+2C5E-U+2FFF, U+3001-U+3057 or U+FB26-U+FEFE is whitespace, which it does
// while scanning values as well as between them (upstream issues #190 and #295, fixed after
// 3.3). Text holding one of those characters anywhere, or that is not UTF-8, is refused with its
// line: the files cudaenv reads as TOML are ASCII in practice.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cudaenv {

struct TomlTextProblem {
  std::size_t line;     // 1-based
  std::string problem;  // "character U+03DB is not supported ..."
};

std::optional<TomlTextProblem> toml_text_problem(std::string_view text);

}  // namespace cudaenv
