#pragma once
// A PyPI-compatible package index through the simple repository API: PEP 691 JSON when the
// index offers it (asked for in the Accept header), PEP 503 HTML otherwise. Index pages are
// untrusted input: they are bounded by the document limits of FetchOptions, parsed narrowly,
// and every link is resolved against the page's own URL after redirects.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "fetch/http.hpp"

namespace cudaenv::fetch {

constexpr const char* pypi_index_url = "https://pypi.org/simple";

// One distribution file a project page lists.
struct IndexFile {
  std::string filename;    // "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64....whl"
  std::string url;         // absolute, without the #sha256= fragment
  std::string sha256;      // lower-case hex; empty when the index gives none
  std::uint64_t size = 0;  // bytes, when the index gives it (PEP 700); 0: unknown
  bool yanked = false;
};

// PEP 503: "Foo.Bar_baz" -> "foo-bar-baz".
std::string normalize_project_name(std::string_view name);

// `reference` (absolute, root-relative or relative) resolved against `base`; empty when either
// is not a URL libcurl can parse.
std::string resolve_url(const std::string& base, const std::string& reference);

// More files than any real project page lists (PyPI's largest list a few ten thousand).
constexpr size_t max_index_files = 200000;

// The files of a PEP 691 JSON project page; an integrity error naming `page_url` when it is not
// one, nests deeper than 16 levels, lists more than `max_files` files, or gives a file a "size"
// that is not a whole number of bytes up to 64 GiB (naming the file's index and the field). Read
// in one pass without a document tree: time and memory linear in the page.
Result<std::vector<IndexFile>> parse_simple_json(std::string_view body, const std::string& page_url,
                                                 size_t max_files = max_index_files);

// The files of a PEP 503 HTML project page: every <a href> with its text as the filename. One
// pass over the page (anchors do not nest); an integrity error past `max_files` files.
Result<std::vector<IndexFile>> parse_simple_html(std::string_view body, const std::string& page_url,
                                                 size_t max_files = max_index_files);

// Fetches <index>/<normalized project>/ and lists its files. not_found (naming the project and
// the index) when the index answers 404 for it; network errors as fetch_text gives them.
Result<std::vector<IndexFile>> fetch_project_files(const std::string& index_url,
                                                   const std::string& project,
                                                   const FetchOptions& options);

// sha256 of bytes held in memory (a small wheel fetched whole), lower-case hex.
std::string sha256_of(std::string_view bytes);

}  // namespace cudaenv::fetch
