#include "lock/lock_file.hpp"

#include <algorithm>
#include <cctype>

#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/text.hpp"
#include "core/toml_guard.hpp"

namespace cudaenv::lock {

namespace fs = std::filesystem;

namespace {

const char* const rewrite_hint = "run `cudaenv lock` to write the lock again";

// Reads fields of one table, each error naming the file, the line and the dotted field.
class FieldReader {
 public:
  FieldReader(const std::string& path, std::size_t fallback_line)
      : path_(path), fallback_line_(fallback_line) {}

  Error error(const toml::node* node, const std::string& field, const std::string& problem) const {
    const auto line = node != nullptr ? node->source().begin.line : fallback_line_;
    return make_error(ErrorKind::failure,
                      path_ + ":" + std::to_string(line) + ": " + field + " " + problem,
                      rewrite_hint);
  }

  Result<std::string> text(const toml::table& table, std::string_view key, const std::string& field,
                           bool required = true) const {
    const auto* node = table.get(key);
    if (node == nullptr) {
      if (!required) return std::string();
      return error(nullptr, field, "is missing");
    }
    const auto value = node->value<std::string>();
    if (!value || value->size() > 4096) return error(node, field, "must be a short string");
    if (text::printable(*value, 4096) != *value)
      return error(node, field, "holds control characters");
    return *value;
  }

  Result<std::uint64_t> size(const toml::table& table, std::string_view key,
                             const std::string& field) const {
    const auto* node = table.get(key);
    const auto value = node != nullptr ? node->value<std::int64_t>() : std::nullopt;
    if (!value || *value < 0) return error(node, field, "must be a non-negative integer");
    return static_cast<std::uint64_t>(*value);
  }

 private:
  const std::string& path_;
  std::size_t fallback_line_;
};

bool is_sha256(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'f');
         });
}

// A path below the mirror's product folder: relative, no "..", no empty or "." parts.
bool is_safe_relative_path(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  for (const auto& part : text::split(p, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

Result<LockedArchive> archive(const toml::node& node, const std::string& field,
                              const std::string& path) {
  const FieldReader read(path, node.source().begin.line);
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  LockedArchive out;
  for (auto [key, slot] :
       {std::pair{"name", &out.name}, std::pair{"version", &out.version},
        std::pair{"relative_path", &out.relative_path}, std::pair{"sha256", &out.sha256}}) {
    auto value = read.text(*table, key, field + "." + key);
    if (!value) return value.error();
    *slot = std::move(*value);
  }
  if (!is_safe_relative_path(out.relative_path))
    return read.error(table->get("relative_path"), field + ".relative_path",
                      "must be a path below the mirror (no \"..\", not absolute)");
  if (!is_sha256(out.sha256))
    return read.error(table->get("sha256"), field + ".sha256", "must be 64 lower-case hex digits");
  auto size = read.size(*table, "size", field + ".size");
  if (!size) return size.error();
  out.size = *size;
  return out;
}

Result<std::vector<LockedArchive>> archives(const toml::table& table, const std::string& field,
                                            const std::string& path) {
  std::vector<LockedArchive> out;
  const auto* node = table.get("components");
  if (node == nullptr) return out;
  const auto* list = node->as_array();
  if (list == nullptr)
    return FieldReader(path, 0).error(node, field + ".components", "must be [[…]] tables");
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto one = archive(*list->get(i), field + ".components[" + std::to_string(i) + "]", path);
    if (!one) return one.error();
    out.push_back(std::move(*one));
  }
  return out;
}

const toml::table* subtable(const toml::table& root, std::string_view key) {
  const auto* node = root.get(key);
  return node != nullptr ? node->as_table() : nullptr;
}

Status read_header(const toml::table& root, const std::string& path, LockFile& lock) {
  const FieldReader read(path, 1);
  const auto* version = root.get("lock_version");
  const auto number = version != nullptr ? version->value<std::int64_t>() : std::nullopt;
  if (!number) return read.error(version, "lock_version", "must be an integer");
  if (*number != current_lock_version)
    return make_error(ErrorKind::failure,
                      path + ": lock_version " + std::to_string(*number) +
                          " is not one this cudaenv reads (it reads " +
                          std::to_string(current_lock_version) + ")",
                      "update cudaenv, or run `cudaenv lock` to write the lock again");
  lock.lock_version = *number;
  auto by = read.text(root, "generated_by", "generated_by", false);
  if (!by) return by.error();
  lock.generated_by = *by;
  const auto* database = subtable(root, "database");
  if (database == nullptr) return read.error(root.get("database"), "[database]", "is missing");
  auto revision = read.text(*database, "revision", "database.revision");
  if (!revision) return revision.error();
  auto digest = read.text(*database, "sha256", "database.sha256");
  if (!digest) return digest.error();
  lock.database_revision = *revision;
  lock.database_sha256 = *digest;
  if (const auto* request = subtable(root, "request")) {
    for (const auto& [key, node] : *request) {
      auto value = read.text(*request, key.str(), "request." + std::string(key.str()));
      if (!value) return value.error();
      lock.request.emplace(std::string(key.str()), *value);
    }
  }
  return Ok{};
}

Status read_toolkit(const toml::table& root, const std::string& path, LockFile& lock) {
  const FieldReader read(path, 1);
  const auto* toolkit = subtable(root, "toolkit");
  if (toolkit == nullptr) return read.error(root.get("toolkit"), "[toolkit]", "is missing");
  auto version = read.text(*toolkit, "version", "toolkit.version");
  if (!version) return version.error();
  auto components = archives(*toolkit, "toolkit", path);
  if (!components) return components.error();
  lock.toolkit = LockedToolkit{*version, std::move(*components)};
  const auto* cudnn = subtable(root, "cudnn");
  if (cudnn == nullptr) return Ok{};
  auto cudnn_version = read.text(*cudnn, "version", "cudnn.version");
  if (!cudnn_version) return cudnn_version.error();
  auto variant = read.text(*cudnn, "cuda_variant", "cudnn.cuda_variant");
  if (!variant) return variant.error();
  auto cudnn_components = archives(*cudnn, "cudnn", path);
  if (!cudnn_components) return cudnn_components.error();
  lock.cudnn = LockedCudnn{*cudnn_version, *variant, std::move(*cudnn_components)};
  return Ok{};
}

// A wheel's file name: one path segment ending in .whl.
bool is_wheel_name(std::string_view name) {
  return text::ends_with(name, ".whl") && name.find('/') == std::string_view::npos &&
         name.find('\\') == std::string_view::npos && name != ".whl";
}

Result<std::vector<LockedWheel>> framework_wheels(const toml::table& table,
                                                  const std::string& field,
                                                  const std::string& path) {
  std::vector<LockedWheel> out;
  const auto* node = table.get("wheels");
  if (node == nullptr) return out;
  const auto* list = node->as_array();
  if (list == nullptr)
    return FieldReader(path, 0).error(node, field + ".wheels", "must be [[…]] tables");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const auto at = field + ".wheels[" + std::to_string(i) + "]";
    const FieldReader read(path, list->get(i)->source().begin.line);
    const auto* wheel = list->get(i)->as_table();
    if (wheel == nullptr) return read.error(list->get(i), at, "must be a table");
    auto filename = read.text(*wheel, "filename", at + ".filename");
    if (!filename) return filename.error();
    if (!is_wheel_name(*filename))
      return read.error(wheel->get("filename"), at + ".filename", "must be a wheel's file name");
    auto sha256 = read.text(*wheel, "sha256", at + ".sha256", false);
    if (!sha256) return sha256.error();
    if (!sha256->empty() && !is_sha256(*sha256))
      return read.error(wheel->get("sha256"), at + ".sha256", "must be 64 lower-case hex digits");
    out.push_back({std::move(*filename), std::move(*sha256)});
  }
  return out;
}

Status read_frameworks(const toml::table& root, const std::string& path, LockFile& lock) {
  const auto* frameworks = subtable(root, "frameworks");
  if (frameworks == nullptr) return Ok{};
  for (const auto& [name, node] : *frameworks) {
    const auto field = "frameworks." + text::printable(name.str());
    const FieldReader read(path, node.source().begin.line);
    const auto* table = node.as_table();
    if (table == nullptr) return read.error(&node, field, "must be a table");
    LockedFramework out;
    for (auto [key, slot] : {std::pair{"version", &out.version},
                             std::pair{"index_url", &out.index_url}, std::pair{"pip", &out.pip}}) {
      auto value = read.text(*table, key, field + "." + key, std::string_view(key) != "index_url");
      if (!value) return value.error();
      *slot = std::move(*value);
    }
    auto wheels = framework_wheels(*table, field, path);
    if (!wheels) return wheels.error();
    out.wheels = std::move(*wheels);
    lock.frameworks.emplace(std::string(name.str()), std::move(out));
  }
  return Ok{};
}

Result<Receipt> receipt(const toml::node& node, const std::string& field, const std::string& path) {
  const FieldReader read(path, node.source().begin.line);
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  Receipt out;
  for (auto [key, slot] :
       {std::pair{"date", &out.date}, std::pair{"gpu", &out.gpu}, std::pair{"arch", &out.arch},
        std::pair{"driver", &out.driver}, std::pair{"toolkit", &out.toolkit},
        std::pair{"report_sha256", &out.report_sha256}, std::pair{"locked_set", &out.locked_set}}) {
    auto value = read.text(*table, key, field + "." + key);
    if (!value) return value.error();
    *slot = std::move(*value);
  }
  return out;
}

Result<std::vector<std::string>> string_list(const toml::table& table, std::string_view key,
                                             const std::string& field, const FieldReader& read) {
  std::vector<std::string> out;
  const auto* node = table.get(key);
  const auto* list = node != nullptr ? node->as_array() : nullptr;
  if (list == nullptr) return read.error(node, field, "must be a list of strings");
  for (const auto& item : *list) {
    const auto value = item.value<std::string>();
    if (!value || text::printable(*value) != *value)
      return read.error(&item, field, "must be a list of short strings");
    out.push_back(*value);
  }
  return out;
}

Result<LockedTarget> target(const toml::node& node, const std::string& field,
                            const std::string& path) {
  const FieldReader read(path, node.source().begin.line);
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  LockedTarget out;
  for (auto [key, slot] : {std::pair{"driver", &out.driver}, std::pair{"mode", &out.mode},
                           std::pair{"TORCH_CUDA_ARCH_LIST", &out.torch_cuda_arch_list},
                           std::pair{"CMAKE_CUDA_ARCHITECTURES", &out.cmake_cuda_architectures},
                           std::pair{"CUDAHOSTCXX", &out.cudahostcxx}}) {
    auto value = read.text(*table, key, field + "." + key, std::string_view(key) != "CUDAHOSTCXX");
    if (!value) return value.error();
    *slot = std::move(*value);
  }
  auto archs = string_list(*table, "arch", field + ".arch", read);
  if (!archs) return archs.error();
  out.archs = std::move(*archs);
  const auto* verified = table->get("verified");
  if (verified == nullptr) return out;
  const auto* list = verified->as_array();
  if (list == nullptr) return read.error(verified, field + ".verified", "must be [[…]] tables");
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto one = receipt(*list->get(i), field + ".verified[" + std::to_string(i) + "]", path);
    if (!one) return one.error();
    out.verified.push_back(std::move(*one));
  }
  return out;
}

Status read_targets(const toml::table& root, const std::string& path, LockFile& lock) {
  const auto* targets = subtable(root, "targets");
  if (targets == nullptr) return Ok{};
  for (const auto& [name, node] : *targets) {
    auto one = target(node, "targets." + text::printable(name.str()), path);
    if (!one) return one.error();
    lock.targets.emplace(std::string(name.str()), std::move(*one));
  }
  return Ok{};
}

}  // namespace

fs::path lock_path_for(const fs::path& project_file) {
  return project_file.parent_path() / lock_file_name;
}

Result<LockFile> parse_lock_file(std::string_view text, const std::string& path) {
  if (const auto bad = toml_text_problem(text))
    return make_error(ErrorKind::failure,
                      path + ":" + std::to_string(bad->line) + ": " + bad->problem, rewrite_hint);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return make_error(ErrorKind::failure,
                      path + ":" + std::to_string(e.source().begin.line) + ": " +
                          text::printable(e.description()),
                      rewrite_hint);
  }
  LockFile lock;
  for (const auto step : {read_header, read_toolkit, read_frameworks, read_targets}) {
    if (auto status = step(root, path, lock); !status) return status.error();
  }
  return lock;
}

Result<LockFile> read_lock_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return make_error(ErrorKind::not_found, path.string() + ": no lock file",
                      "run `cudaenv lock` to write it");
  auto text = read_small_file(path);
  if (!text) return make_error(ErrorKind::failure, text.error().message, rewrite_hint);
  return parse_lock_file(*text, path.string());
}

}  // namespace cudaenv::lock
