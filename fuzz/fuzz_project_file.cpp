// The .cudaenv parser (bare version or TOML) and the global config parser: every input gives a
// value or an error naming the file, never an exception or a crash.

#include <string>

#include "fuzz_input.hpp"
#include "project/config.hpp"
#include "project/project_file.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fuzz::as_text(data, size);
  const std::string path = "/repo/.cudaenv";
  (void)project::bare_version(text);
  if (auto file = project::parse_project_file(text, path); !file) {
    fuzz::require(file.error().message.starts_with(path + ":"), "a .cudaenv error names the file");
  }
  if (auto config = project::parse_config(text, "/home/u/.config/cudaenv/config.toml"); !config) {
    fuzz::require(config.error().message.starts_with("/home/u/.config/cudaenv/config.toml:"),
                  "a config error names the file");
  }
  return 0;
}
