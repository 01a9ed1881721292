#pragma once
// scripts/get-cudaenv, compiled into the program (src/CMakeLists.txt) so that `mirror create
// --with-cudaenv` can serve it beside the bundle.

#include <string>
#include <vector>

namespace cudaenv::install {

struct GetScript {
  std::string name;
  std::string text;
};
const std::vector<GetScript>& embedded_get_script();

}  // namespace cudaenv::install
