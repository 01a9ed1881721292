#include "install/remote.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "core/safe_write.hpp"
#include "core/text.hpp"

namespace cudaenv::install {

namespace {

constexpr std::string_view file_scheme = "file://";

std::vector<Version> newest_first(const std::set<std::string>& names) {
  std::vector<Version> versions;
  for (const auto& name : names) {
    if (auto v = Version::parse(name)) versions.push_back(*v);
  }
  std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) { return a > b; });
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

// A mirror without `product`: cuDNN gets its own advice (the toolkit may well be there).
Error product_missing(const std::string& where, const std::string& product,
                      const std::string& why) {
  if (product == "cudnn") {
    return make_error(ErrorKind::not_found, where + ": this mirror carries no cuDNN (" + why + ")",
                      "add cuDNN to the mirror with 'cudaenv mirror create DIR --cuda VERSION "
                      "--cudnn VERSION', point --mirror at one that has it, or leave out --cudnn");
  }
  return make_error(ErrorKind::network, where + ": " + why,
                    "check the mirror (--mirror, CUDAENV_MIRROR), or make one with 'cudaenv "
                    "mirror create DIR --cuda VERSION' and use it with --mirror file://DIR");
}

Result<std::vector<Version>> list_local_directory(const std::string& directory,
                                                  const std::string& product) {
  std::set<std::string> names;
  std::error_code ec;
  static const std::regex pattern(R"(redistrib_([0-9][0-9.]*)\.json)");
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch match;
    const auto name = it->path().filename().string();
    if (std::regex_match(name, match, pattern)) names.insert(match[1].str());
  }
  if (ec) return product_missing("cannot list " + directory, product, ec.message());
  return newest_first(names);
}

}  // namespace

std::string normalize_mirror(std::string base) {
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (!base.empty() && base.front() == '/') base = std::string(file_scheme) + base;
  return base;
}

std::string redist_dir_url(const std::string& base, const std::string& product) {
  return base + "/" + product + "/redist/";
}

std::string manifest_url(const std::string& base, const std::string& product,
                         const Version& version) {
  return redist_dir_url(base, product) + "redistrib_" + version.str() + ".json";
}

std::string archive_url(const std::string& base, const std::string& product,
                        const std::string& relative_path) {
  return redist_dir_url(base, product) + relative_path;
}

std::vector<Version> versions_in_index(const std::string& html) {
  static const std::regex href(R"(href\s*=\s*["']?(?:[^"'>]*/)?redistrib_([0-9][0-9.]*)\.json)",
                               std::regex::icase);
  std::set<std::string> names;
  for (std::sregex_iterator it(html.begin(), html.end(), href), end; it != end; ++it) {
    names.insert((*it)[1].str());
  }
  return newest_first(names);
}

Result<std::vector<Version>> list_remote_versions(const std::string& base,
                                                  const std::string& product,
                                                  const fetch::FetchOptions& options) {
  const auto url = redist_dir_url(base, product);
  if (text::starts_with(url, file_scheme))
    return list_local_directory(url.substr(file_scheme.size()), product);
  long status = 0;
  auto index = fetch::fetch_text(url, options, &status);
  if (!index && status == 404 && product == "cudnn")
    return product_missing(url, product, "no cudnn/redist/ listing, HTTP 404");
  if (!index && status == 404) {
    return make_error(
        ErrorKind::network,
        url + ": no directory listing (HTTP 404), so the releases cannot be listed",
        "name an exact CUDA version (such as 12.4.1): it is fetched without a listing");
  }
  if (!index) return index.error();
  auto versions = versions_in_index(*index);
  if (versions.empty() && product == "cudnn")
    return product_missing(url, product, "its index lists no redistrib_<version>.json");
  if (versions.empty()) {
    return make_error(ErrorKind::network,
                      url + ": the directory index lists no redistrib_<version>.json",
                      "the mirror must serve a directory listing of " + product + "/redist/");
  }
  return versions;
}

Result<manifest::RedistManifest> fetch_manifest(const std::string& base, const std::string& product,
                                                const Version& version, const Store& store,
                                                const fetch::FetchOptions& options,
                                                std::string* raw) {
  const auto url = manifest_url(base, product, version);
  auto text = fetch::fetch_text(url, options);
  if (!text) return text.error();
  auto manifest = manifest::parse_redist(*text, url);
  if (!manifest) return manifest.error();
  // Only a cache: a store that cannot keep the copy loses nothing. Never through a planted link.
  (void)write_file_atomically(
      store.manifests() / product / ("redistrib_" + version.str() + ".json"), *text);
  if (raw != nullptr) *raw = std::move(*text);
  return manifest;
}

}  // namespace cudaenv::install
