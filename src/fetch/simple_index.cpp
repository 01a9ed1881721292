#include "fetch/simple_index.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "core/text.hpp"
#include "core/untrusted.hpp"

namespace cudaenv::fetch {

namespace {

// PEP 691 pages nest four deep (page, "files", a file, its "hashes"); a page nested deeper than
// this is refused while it is read, so a page of "[[[[..." costs no memory per level.
constexpr size_t max_json_depth = 16;

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

Error too_many_files(const std::string& page_url, size_t max_files) {
  return make_error(ErrorKind::integrity,
                    page_url + ": lists more than " + std::to_string(max_files) + " files",
                    "the index is corrupt or hostile: check --index-url");
}

Error not_a_project_page(const std::string& page_url, const std::string& why) {
  return make_error(ErrorKind::integrity, page_url + ": not a PEP 691 project page (" + why + ")",
                    "check --index-url: it should name a simple index such as "
                    "https://pypi.org/simple");
}

// Reads a PEP 691 page as the parser meets its values, keeping only the files: no document tree
// is built, so memory stays within the files kept and the nesting within max_json_depth. Every
// value not in a file's "filename", "url", "hashes.sha256", "size" or "yanked" is skipped.
class ProjectPageReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  ProjectPageReader(const std::string& page_url, size_t max_files)
      : page_url_(page_url), max_files_(max_files) {}

  Result<std::vector<IndexFile>> result() {
    if (error_) return *error_;
    if (!saw_files_) return not_a_project_page(page_url_, "no \"files\" list");
    return std::move(files_);
  }

  bool null() override { return scalar(Value{"null", false, false}); }
  bool boolean(bool value) override {
    return scalar(Value{value ? "true" : "false", false, value});
  }
  bool number_integer(number_integer_t value) override {
    return scalar(Value{std::to_string(value), false, false});
  }
  bool number_unsigned(number_unsigned_t value) override {
    return scalar(Value{std::to_string(value), false, false});
  }
  bool number_float(number_float_t, const string_t& text) override {
    return scalar(Value{text, false, false});
  }
  bool string(string_t& value) override { return scalar(Value{std::move(value), true, false}); }
  bool binary(binary_t&) override { return scalar(Value{"binary", false, false}); }

  bool key(string_t& name) override {
    key_ = std::move(name);
    return true;
  }

  bool start_object(std::size_t) override { return open(Scope::object); }
  bool start_array(std::size_t) override { return open(Scope::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    if (!error_) error_ = not_a_project_page(page_url_, "not JSON");
    return false;
  }

 private:
  enum class Scope { object, array };
  // What an open object or array is to the page.
  enum class Role { other, page, files, file, hashes };
  // A scalar as the page wrote it: numbers keep their text ("-5", "1.5", "1e9").
  struct Value {
    std::string text;
    bool is_string;
    bool is_true;
  };
  Role parent() const { return stack_.empty() ? Role::other : stack_.back(); }

  bool fail(Error error) {
    if (!error_) error_ = std::move(error);
    return false;
  }

  bool open(Scope scope) {
    if (stack_.size() >= max_json_depth)
      return fail(not_a_project_page(
          page_url_, "nested deeper than " + std::to_string(max_json_depth) + " levels"));
    Role role = Role::other;
    if (parent() == Role::files) ++files_listed_;
    if (stack_.empty()) {
      if (scope != Scope::object) return fail(not_a_project_page(page_url_, "not an object"));
      role = Role::page;
    } else if (parent() == Role::page && key_ == "files" && scope == Scope::array) {
      role = Role::files;
      saw_files_ = true;
    } else if (parent() == Role::files && scope == Scope::object) {
      role = Role::file;
      entry_ = Entry{};
    } else if (parent() == Role::file && key_ == "hashes" && scope == Scope::object) {
      role = Role::hashes;
    } else if (parent() == Role::file && key_ == "size") {
      return fail(bad_size("an " + std::string(scope == Scope::object ? "object" : "array")));
    }
    stack_.push_back(role);
    return true;
  }

  bool close() {
    const Role role = parent();
    stack_.pop_back();
    return role == Role::file ? finish_entry() : true;
  }

  bool scalar(Value value) {
    if (parent() == Role::files) ++files_listed_;
    if (parent() == Role::hashes && key_ == "sha256") {
      entry_.sha256 = value.is_string ? std::move(value.text) : std::string();
    } else if (parent() == Role::file) {
      if (key_ == "filename" || key_ == "url") {
        (key_ == "url" ? entry_.url : entry_.filename) =
            value.is_string ? std::optional<std::string>(std::move(value.text)) : std::nullopt;
      } else if (key_ == "yanked") {
        entry_.yanked = value.is_string || value.is_true;
      } else if (key_ == "size") {
        // PEP 700: an integer. A negative, fractional or absurd size, or one written as a
        // string, says the page is not what it claims: refused, never taken as "unknown".
        if (value.is_string) return fail(bad_size("a string"));
        auto bytes = untrusted::byte_size(value.text, where("size"));
        if (!bytes) return fail(bytes.error());
        entry_.size = *bytes;
      }
    } else if (stack_.empty()) {
      return fail(not_a_project_page(page_url_, "not an object"));
    }
    return true;
  }

  std::string where(const std::string& field) const {
    return page_url_ + ": files[" + std::to_string(files_listed_ - 1) + "]." + field;
  }

  Error bad_size(const std::string& what) const {
    return make_error(ErrorKind::integrity,
                      where("size") + ": " + what + ", not a whole number of bytes",
                      "the index is corrupt or hostile: check --index-url");
  }

  bool finish_entry() {
    if (!entry_.filename || !entry_.url) return true;
    IndexFile file = file_from_link(*entry_.url, page_url_);
    if (file.url.empty()) return true;
    file.filename = std::move(*entry_.filename);
    if (is_sha256_hex(entry_.sha256)) file.sha256 = lowercase(entry_.sha256);
    file.size = entry_.size;
    file.yanked = entry_.yanked;
    if (files_.size() == max_files_) return fail(too_many_files(page_url_, max_files_));
    files_.push_back(std::move(file));
    return true;
  }

  struct Entry {
    std::optional<std::string> filename;
    std::optional<std::string> url;
    std::string sha256;
    std::uint64_t size = 0;
    bool yanked = false;
  };

  const std::string& page_url_;
  size_t max_files_;
  std::vector<Role> stack_;  // the open objects and arrays, outermost first
  std::string key_;
  Entry entry_;
  std::size_t files_listed_ = 0;  // elements of "files" so far, the current one included
  bool saw_files_ = false;
  std::vector<IndexFile> files_;
  std::optional<Error> error_;
};

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

Result<std::vector<IndexFile>> parse_simple_html(std::string_view body, const std::string& page_url,
                                                 size_t max_files) {
  std::vector<IndexFile> files;
  const auto low = lowercase(body);
  // One pass: each search starts after the previous anchor's end, so no byte is scanned twice
  // (a page of "<a <a <a ..." once made every anchor scan the rest of the page).
  for (size_t at = low.find("<a"); at != std::string::npos; at = low.find("<a", at)) {
    if (at + 2 >= low.size() || std::isspace(static_cast<unsigned char>(low[at + 2])) == 0) {
      at += 2;
      continue;
    }
    const auto tag_end = low.find('>', at);
    const auto close = tag_end == std::string::npos ? tag_end : low.find("</a", tag_end);
    if (close == std::string::npos) break;
    const auto tag = body.substr(at + 2, tag_end - at - 2);
    at = close + 3;
    const auto href = attribute(tag, "href");
    if (!href || href->empty()) continue;
    auto file = file_from_link(*href, page_url);
    file.filename =
        std::string(text::trim(unescape_html(body.substr(tag_end + 1, close - tag_end - 1))));
    file.yanked = attribute(tag, "data-yanked").has_value();
    if (file.url.empty() || file.filename.empty()) continue;
    if (files.size() == max_files) return too_many_files(page_url, max_files);
    files.push_back(std::move(file));
  }
  return files;
}

Result<std::vector<IndexFile>> parse_simple_json(std::string_view body, const std::string& page_url,
                                                 size_t max_files) {
  ProjectPageReader reader(page_url, max_files);
  nlohmann::json::sax_parse(body, &reader);
  return reader.result();
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
