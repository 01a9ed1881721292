#include "verify/embedded.hpp"

namespace cudaenv::verify {

const std::string& embedded_file(std::string_view name) {
  static const std::string none;
  for (const auto& file : embedded_files()) {
    if (file.name == name) return file.text;
  }
  return none;
}

}  // namespace cudaenv::verify
