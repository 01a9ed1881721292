#include "manifest/redist.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "core/untrusted.hpp"

namespace cudaenv::manifest {

namespace {

using json = nlohmann::json;

constexpr const char* hostile_hint =
    "the mirror's manifest is corrupt or hostile; use another mirror";

// A value from the mirror as it may appear in a message: control characters escaped, cut short.
std::string shown(std::string_view value) {
  constexpr std::size_t max_shown = 80;
  std::string out;
  for (const char c : value.substr(0, max_shown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '"' || c == '\\') {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  if (value.size() > max_shown) out += "...";
  return out;
}

Error mirror_error(const std::string& where, const std::string& problem) {
  return make_error(ErrorKind::integrity, where + ": " + problem, hostile_hint);
}

// Names, versions, platform keys, relative paths and hashes keep to the one validator's grammars
// (core/untrusted.hpp): so a path never holds "..", "%2e%2e" or "/", whichever command reads it.
bool is_name(const std::string& value) {
  return untrusted::is_valid(untrusted::Field::component_name, value);
}

// A string field: nullopt and an error when it is missing (if required) or not a string.
Result<std::optional<std::string>> string_field(const json& object, const char* key,
                                                const std::string& where, bool required) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) return mirror_error(where, std::string(key) + " is missing");
    return std::optional<std::string>{};
  }
  if (!it->is_string()) return mirror_error(where, std::string(key) + " must be a string");
  return std::optional<std::string>{it->get<std::string>()};
}

// NVIDIA writes sizes as strings of digits; numbers are accepted too. Either way the text must
// be a whole number of bytes within the download ceiling: "-5", 1.5, "1e9" or 2^70 are refused.
Result<std::uint64_t> size_field(const json& entry, const std::string& where) {
  const auto it = entry.find("size");
  if (it == entry.end()) return mirror_error(where, "size is missing");
  if (!it->is_string() && !it->is_number())
    return mirror_error(where, "size must be a whole number of bytes");
  const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
  return untrusted::byte_size(text, where + ": size");
}

Result<RedistFile> read_file_entry(const json& entry, const std::string& where) {
  auto path = string_field(entry, "relative_path", where, true);
  if (!path) return path.error();
  auto sha256 = string_field(entry, "sha256", where, true);
  if (!sha256) return sha256.error();
  auto& hash = **sha256;
  std::transform(hash.begin(), hash.end(), hash.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!untrusted::is_valid(untrusted::Field::relative_path, **path))
    return mirror_error(where, "unsafe relative_path \"" + shown(**path) + "\"");
  if (!untrusted::is_valid(untrusted::Field::sha256, hash))
    return mirror_error(where, "malformed sha256 \"" + shown(hash) + "\"");
  auto bytes = size_field(entry, where);
  if (!bytes) return bytes.error();
  return RedistFile{**path, hash, *bytes};
}

bool looks_like_file(const json& value) {
  return value.is_object() && value.contains("relative_path");
}

// A platform value is a file entry, or (cuDNN) an object of "cudaNN" variants, or both.
Status read_platform(const std::string& platform, const json& value, const std::string& where,
                     RedistComponent& component) {
  if (!is_name(platform))
    return mirror_error(where, "unsafe platform name \"" + shown(platform) + "\"");
  if (looks_like_file(value)) {
    auto file = read_file_entry(value, where + "." + platform);
    if (!file) return file.error();
    component.files[platform] = std::move(*file);
  }
  for (const auto& [variant, entry] : value.items()) {
    if (!looks_like_file(entry)) continue;
    if (!is_name(variant))
      return mirror_error(where + "." + platform, "unsafe variant name \"" + shown(variant) + "\"");
    auto file = read_file_entry(entry, where + "." + platform + "." + variant);
    if (!file) return file.error();
    component.files[platform + "/" + variant] = std::move(*file);
  }
  return Ok{};
}

// name, license and version: optional strings; a version must also be a safe name.
Status read_labels(const json& value, const std::string& where, RedistComponent& component) {
  auto name = string_field(value, "name", where, false);
  if (!name) return name.error();
  auto license = string_field(value, "license", where, false);
  if (!license) return license.error();
  auto version = string_field(value, "version", where, false);
  if (!version) return version.error();
  component.name = name->value_or("");
  component.license = license->value_or("");
  if (*version) {
    if (!untrusted::is_valid(untrusted::Field::component_version, **version))
      return mirror_error(where, "version \"" + shown(**version) + "\" is not a version");
    component.version = Version::parse(**version);  // nullopt for ones beyond our range
  }
  return Ok{};
}

Result<RedistComponent> read_component(const std::string& key, const json& value,
                                       const std::string& origin) {
  if (!is_name(key)) return mirror_error(origin, "unsafe component name \"" + shown(key) + "\"");
  RedistComponent component;
  component.key = key;
  const auto where = origin + ": " + key;
  if (auto labels = read_labels(value, where, component); !labels) return labels.error();
  for (const auto& [platform, entry] : value.items()) {
    if (!entry.is_object()) continue;  // name, license, version, cuda_variant
    auto status = read_platform(platform, entry, where, component);
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
  auto label = string_field(document, "release_label", origin, false);
  if (!label) return label.error();
  auto date = string_field(document, "release_date", origin, false);
  if (!date) return date.error();
  manifest.release_label = label->value_or("");
  manifest.release_date = date->value_or("");
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
