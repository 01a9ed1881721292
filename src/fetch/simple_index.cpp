#include "fetch/simple_index.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "core/text.hpp"

namespace cudaenv::fetch {

namespace {

// More links than any real project page has (PyPI's largest list a few ten thousand files).
constexpr size_t max_index_files = 200000;

constexpr const char* accept_json_first =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01";

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

// The five entities an index page uses in names and links; anything else stays as written.
std::string unescape_html(std::string_view s) {
  static const std::pair<std::string_view, char> entities[] = {{"&amp;", '&'},  {"&lt;", '<'},
                                                               {"&gt;", '>'},   {"&quot;", '"'},
                                                               {"&#39;", '\''}, {"&#x27;", '\''}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    for (const auto& [entity, c] : entities) {
      if (s.substr(i, entity.size()) == entity) {
        out += c;
        i += entity.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += s[i++];
  }
  return out;
}

// A link with its "#sha256=<hex>" fragment split off (PEP 503); other hashes are not used.
IndexFile file_from_link(const std::string& href, const std::string& page_url) {
  IndexFile file;
  std::string link = href;
  if (const auto hash = link.find('#'); hash != std::string::npos) {
    const auto fragment = std::string_view(link).substr(hash + 1);
    if (text::starts_with(fragment, "sha256=") && is_sha256_hex(fragment.substr(7)))
      file.sha256 = lowercase(fragment.substr(7));
    link.erase(hash);
  }
  file.url = resolve_url(page_url, link);
  // An index on the network cannot send the download to a local file (file://) or to another
  // protocol libcurl speaks: http(s), or the index's own scheme.
  const auto scheme = file.url.substr(0, file.url.find(':'));
  if (scheme != "http" && scheme != "https" && scheme != page_url.substr(0, page_url.find(':')))
    file.url.clear();
  return file;
}

// The value of attribute `name` in the text of one tag ("a href='x' data-yanked"), if present.
std::optional<std::string> attribute(std::string_view tag, std::string_view name) {
  const auto low = lowercase(tag);
  for (size_t at = low.find(name); at != std::string::npos; at = low.find(name, at + 1)) {
    const bool starts = at > 0 && std::isspace(static_cast<unsigned char>(low[at - 1])) != 0;
    size_t i = at + name.size();
    if (!starts || (i < low.size() && low[i] != '=' && low[i] != ' ' && low[i] != '\t' &&
                    low[i] != '\n' && low[i] != '/'))
      continue;
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i])) != 0) ++i;
    if (i >= tag.size() || tag[i] != '=') return std::string();  // present without a value
    ++i;
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i])) != 0) ++i;
    if (i < tag.size() && (tag[i] == '"' || tag[i] == '\'')) {
      const auto end = tag.find(tag[i], i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      return unescape_html(tag.substr(i + 1, end - i - 1));
    }
    size_t end = i;
    while (end < tag.size() && std::isspace(static_cast<unsigned char>(tag[end])) == 0) ++end;
    return unescape_html(tag.substr(i, end - i));
  }
  return std::nullopt;
}

}  // namespace

std::string normalize_project_name(std::string_view name) {
  std::string out;
  bool separator = false;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      separator = true;
      continue;
    }
    if (separator && !out.empty()) out += '-';
    separator = false;
    out += lower(c);
  }
  return out;
}

std::string resolve_url(const std::string& base, const std::string& reference) {
  using Handle = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;
  Handle url(curl_url(), curl_url_cleanup);
  if (!url || curl_url_set(url.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) return {};
  if (curl_url_set(url.get(), CURLUPART_URL, reference.c_str(), 0) != CURLUE_OK) return {};
  char* joined = nullptr;
  if (curl_url_get(url.get(), CURLUPART_URL, &joined, 0) != CURLUE_OK) return {};
  std::string out = joined;
  curl_free(joined);
  return out;
}

std::vector<IndexFile> parse_simple_html(std::string_view body, const std::string& page_url) {
  std::vector<IndexFile> files;
  const auto low = lowercase(body);
  for (size_t at = low.find("<a"); at != std::string::npos && files.size() < max_index_files;
       at = low.find("<a", at + 2)) {
    if (at + 2 >= low.size() || std::isspace(static_cast<unsigned char>(low[at + 2])) == 0)
      continue;
    const auto tag_end = low.find('>', at);
    const auto close = tag_end == std::string::npos ? tag_end : low.find("</a", tag_end);
    if (close == std::string::npos) break;
    const auto tag = body.substr(at + 2, tag_end - at - 2);
    const auto href = attribute(tag, "href");
    if (!href || href->empty()) continue;
    auto file = file_from_link(*href, page_url);
    file.filename =
        std::string(text::trim(unescape_html(body.substr(tag_end + 1, close - tag_end - 1))));
    file.yanked = attribute(tag, "data-yanked").has_value();
    if (!file.url.empty() && !file.filename.empty()) files.push_back(std::move(file));
  }
  return files;
}

Result<std::vector<IndexFile>> parse_simple_json(std::string_view body,
                                                 const std::string& page_url) {
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("files") ||
      !doc["files"].is_array()) {
    return make_error(ErrorKind::integrity,
                      page_url + ": not a PEP 691 project page (no \"files\" list)",
                      "check --index-url: it should name a simple index such as "
                      "https://pypi.org/simple");
  }
  std::vector<IndexFile> files;
  for (const auto& entry : doc["files"]) {
    if (files.size() >= max_index_files) break;
    if (!entry.is_object() || !entry.contains("filename") || !entry["filename"].is_string() ||
        !entry.contains("url") || !entry["url"].is_string())
      continue;
    IndexFile file = file_from_link(entry["url"].get<std::string>(), page_url);
    file.filename = entry["filename"].get<std::string>();
    if (entry.contains("hashes") && entry["hashes"].is_object() &&
        entry["hashes"].contains("sha256") && entry["hashes"]["sha256"].is_string()) {
      const auto sha = entry["hashes"]["sha256"].get<std::string>();
      if (is_sha256_hex(sha)) file.sha256 = lowercase(sha);
    }
    if (entry.contains("size") && entry["size"].is_number_unsigned())
      file.size = entry["size"].get<std::uint64_t>();
    if (entry.contains("yanked"))
      file.yanked = entry["yanked"].is_string() || entry["yanked"] == true;
    if (!file.url.empty()) files.push_back(std::move(file));
  }
  return files;
}

Result<std::vector<IndexFile>> fetch_project_files(const std::string& index_url,
                                                   const std::string& project,
                                                   const FetchOptions& options) {
  std::string base = index_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const auto page = base + "/" + normalize_project_name(project) + "/";
  auto with_accept = options;
  with_accept.accept = accept_json_first;
  long status = 0;
  std::string landed = page;
  auto body = fetch_text(page, with_accept, &status, &landed);
  if (!body && status == 404) {
    return make_error(ErrorKind::not_found, "no project " + project + " on the index " + base,
                      "check --index-url (or PIP_INDEX_URL): the index must carry NVIDIA's "
                      "wheels, as https://pypi.org/simple does");
  }
  if (!body) return body.error();
  const auto first = body->find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (*body)[first] == '{') return parse_simple_json(*body, landed);
  return parse_simple_html(*body, landed);
}

std::string sha256_of(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace cudaenv::fetch
