// A package index's project page as an index serves it (PEP 503 HTML, then PEP 691 JSON): every
// page gives a list of files or an error naming the page, never a crash, and every file parsed
// has an absolute http(s) URL without a fragment, a digest that is empty or 64 hex digits and a
// size within 64 GiB; no page yields more than 200000 files. The seeds under
// corpus/simple_index/ include hostile pages: nesting without end, sizes that are negative,
// fractional, strings or absurd, anchors that never close, one anchor with many attributes.

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
    fuzz::require(file.size <= untrusted::max_download_size, "a size is within the ceiling");
  }
  fuzz::require(files.size() <= fetch::max_index_files, "no more files than the cap");
}

void check_error(const Error& error, const std::string& page) {
  fuzz::require(error.kind == ErrorKind::integrity, "a bad page is an integrity error");
  fuzz::require(error.message.starts_with(page), "an error names the page");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string page = "https://index.example/simple/nvidia-cuda-nvcc/";
  const auto text = fuzz::as_text(data, size);
  auto html = fetch::parse_simple_html(text, page);
  if (html)
    check_files(*html);
  else
    check_error(html.error(), page);
  auto json = fetch::parse_simple_json(text, page);
  if (json)
    check_files(*json);
  else
    check_error(json.error(), page);
  return 0;
}
