#include "manifest/redist.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace cudaenv::manifest {

namespace {

using json = nlohmann::json;

bool is_sha256(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A relative path must stay below the mirror's product directory: no absolute path, no "..",
// no empty component, no backslash tricks.
bool is_safe_relative_path(const std::string& path) {
  if (path.empty() || path.front() == '/' || text::contains(path, "\\")) return false;
  const auto parts = text::split(path, '/');
  return std::none_of(parts.begin(), parts.end(),
                      [](const std::string& p) { return p.empty() || p == "." || p == ".."; });
}

Result<RedistFile> read_file_entry(const json& entry, const std::string& where) {
  const auto string_field = [&](const char* key) -> std::optional<std::string> {
    const auto it = entry.find(key);
    if (it == entry.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto path = string_field("relative_path");
  auto sha256 = string_field("sha256");
  const auto size = string_field("size");
  if (!path || !sha256) {
    return make_error(ErrorKind::failure, where + ": relative_path or sha256 missing");
  }
  std::transform(sha256->begin(), sha256->end(), sha256->begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!is_safe_relative_path(*path)) {
    return make_error(ErrorKind::integrity, where + ": unsafe relative_path \"" + *path + "\"",
                      "the mirror's manifest is corrupt or hostile; use another mirror");
  }
  if (!is_sha256(*sha256)) {
    return make_error(ErrorKind::integrity, where + ": malformed sha256 \"" + *sha256 + "\"");
  }
  // NVIDIA writes sizes as strings; accept numbers too.
  std::uint64_t bytes = 0;
  if (const auto it = entry.find("size"); it != entry.end() && it->is_number_unsigned()) {
    bytes = it->get<std::uint64_t>();
  } else if (size) {
    const auto parsed = text::parse_integer(*size);
    if (!parsed)
      return make_error(ErrorKind::failure, where + ": size \"" + *size + "\" is not a number");
    bytes = static_cast<std::uint64_t>(*parsed);
  }
  return RedistFile{*path, *sha256, bytes};
}

bool looks_like_file(const json& value) {
  return value.is_object() && value.contains("relative_path");
}

// A platform value is a file entry, or (cuDNN) an object of "cudaNN" variants, or both.
Status read_platform(const std::string& platform, const json& value, const std::string& where,
                     RedistComponent& component) {
  if (looks_like_file(value)) {
    auto file = read_file_entry(value, where + "." + platform);
    if (!file) return file.error();
    component.files[platform] = std::move(*file);
  }
  for (const auto& [variant, entry] : value.items()) {
    if (!looks_like_file(entry)) continue;
    auto file = read_file_entry(entry, where + "." + platform + "." + variant);
    if (!file) return file.error();
    component.files[platform + "/" + variant] = std::move(*file);
  }
  return Ok{};
}

Result<RedistComponent> read_component(const std::string& key, const json& value,
                                       const std::string& origin) {
  RedistComponent component;
  component.key = key;
  component.name = value.value("name", std::string{});
  component.license = value.value("license", std::string{});
  if (const auto it = value.find("version"); it != value.end() && it->is_string()) {
    component.version = Version::parse(it->get<std::string>());
  }
  for (const auto& [platform, entry] : value.items()) {
    if (!entry.is_object()) continue;  // name, license, version, cuda_variant
    auto status = read_platform(platform, entry, origin + ": " + key, component);
    if (!status) return status.error();
  }
  return component;
}

}  // namespace

const RedistComponent* RedistManifest::component(const std::string& key) const {
  const auto it = std::find_if(components.begin(), components.end(),
                               [&](const RedistComponent& c) { return c.key == key; });
  return it == components.end() ? nullptr : &*it;
}

Result<RedistManifest> parse_redist(std::string_view text, const std::string& origin) {
  const auto document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    return make_error(ErrorKind::failure, origin + ": not a redistrib manifest (invalid JSON)",
                      "check the mirror URL");
  }
  RedistManifest manifest;
  manifest.release_label = document.value("release_label", std::string{});
  manifest.release_date = document.value("release_date", std::string{});
  for (const auto& [key, value] : document.items()) {
    if (!value.is_object()) continue;
    auto component = read_component(key, value, origin);
    if (!component) return component.error();
    manifest.components.push_back(std::move(*component));
  }
  return manifest;
}

const RedistFile* redist_file(const RedistComponent& component, const std::string& platform,
                              const std::string& variant) {
  const auto key = variant.empty() ? platform : platform + "/" + variant;
  const auto it = component.files.find(key);
  return it == component.files.end() ? nullptr : &it->second;
}

}  // namespace cudaenv::manifest
