#pragma once
// Source files verify writes out and runs: device_query.cu and frameworks.py, compiled into the
// binary by cmake/EmbedFiles.cmake.

#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::verify {

struct EmbeddedFile {
  std::string name;  // "device_query.cu"
  std::string text;
};

const std::vector<EmbeddedFile>& embedded_files();

// The text of the embedded file `name`; empty when there is none (a build error, caught by the
// unit tests).
const std::string& embedded_file(std::string_view name);

}  // namespace cudaenv::verify
