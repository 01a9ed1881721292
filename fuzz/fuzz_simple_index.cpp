// A package index's project page as an index serves it (PEP 503 HTML, then PEP 691 JSON): every
// page gives a list of files or an error naming the page, never a crash, and every file parsed
// has an absolute http(s) URL without a fragment and a digest that is empty or 64 hex digits.

#include <string>

#include "fetch/simple_index.hpp"
#include "fuzz_input.hpp"

using namespace cudaenv;

namespace {

void check_files(const std::vector<fetch::IndexFile>& files) {
  for (const auto& file : files) {
    fuzz::require(file.url.starts_with("http://") || file.url.starts_with("https://"),
                  "a file URL is absolute, below the page's scheme");
    fuzz::require(file.url.find('#') == std::string::npos, "the fragment is split off");
    fuzz::require(file.sha256.empty() || file.sha256.size() == 64, "a sha256 has 64 digits");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string page = "https://index.example/simple/nvidia-cuda-nvcc/";
  const auto text = fuzz::as_text(data, size);
  check_files(fetch::parse_simple_html(text, page));
  auto json = fetch::parse_simple_json(text, page);
  if (!json) {
    fuzz::require(json.error().message.starts_with(page), "an error names the page");
    return 0;
  }
  check_files(*json);
  return 0;
}
