// NVIDIA redist JSON as a mirror serves it: every document gives a manifest or an error naming
// its origin, and whatever parses holds only names and paths safe to use in the store.

#include <algorithm>
#include <string>

#include "core/text.hpp"
#include "fuzz_input.hpp"
#include "manifest/redist.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string origin = "https://mirror/cuda/redist/redistrib_12.4.1.json";
  auto manifest = manifest::parse_redist(fuzz::as_text(data, size), origin);
  if (!manifest) {
    fuzz::require(manifest.error().message.starts_with(origin), "an error names the origin");
    return 0;
  }
  for (const auto& component : manifest->components) {
    fuzz::require(!component.key.empty() && component.key.find('/') == std::string::npos &&
                      component.key != "..",
                  "a component name is a plain name");
    for (const auto& [platform, file] : component.files) {
      const auto parts = text::split(file.relative_path, '/');
      fuzz::require(file.relative_path.front() != '/' &&
                        std::find(parts.begin(), parts.end(), "..") == parts.end(),
                    "a relative path stays below the mirror");
      fuzz::require(file.sha256.size() == 64, "a sha256 has 64 digits");
      (void)manifest::redist_file(component, platform);
    }
  }
  return 0;
}
