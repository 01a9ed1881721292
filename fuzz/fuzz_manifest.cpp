// The compatibility database's TOML files, as a newer copy in the data root may hold them: the
// same text is read as each of the database's files; each gives a database or an error naming
// the file, never an exception.

#include <string>

#include "fuzz_input.hpp"
#include "manifest/load.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  for (const char* name :
       {"cuda.toml", "cudnn.toml", "frameworks.toml", "drivers.toml", "sources.toml"}) {
    const std::string origin = std::string("/root/manifests/") + name;
    auto database = manifest::load_database({manifest::ManifestFile{name, text, origin}});
    if (!database) {
      fuzz::require(database.error().message.starts_with(origin + ":"),
                    "an error names the file and line");
    }
  }
  return 0;
}
