#include "lock/lock_file.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/text.hpp"
#include "core/toml_guard.hpp"
#include "core/untrusted.hpp"

namespace cudaenv::lock {

namespace fs = std::filesystem;
using untrusted::Field;

namespace {

const char* const rewrite_hint = "run `cudaenv lock` to write the lock again";
const char* const hostile_hint =
    "the lock is corrupt or hostile: do not sync from it; run `cudaenv lock` to write it again";

// Ok when `value` is a valid `grammar`; else ErrorKind::integrity naming `where`.
Status check_field(Field grammar, std::string_view value, const std::string& where) {
  auto ok = untrusted::check(grammar, value, where);
  if (ok) return ok;
  return make_error(ErrorKind::integrity, ok.error().message, hostile_hint);
}

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
    if (text::printable(*value, 4096) != *value)  // a terminal escape, a forged line: hostile
      return make_error(
          ErrorKind::integrity,
          where(node, field) + ": \"" + text::printable(*value) + "\" holds control characters",
          hostile_hint);
    return *value;
  }

  // A string that must also pass `grammar`: ErrorKind::integrity naming the line when not.
  Result<std::string> checked(const toml::table& table, std::string_view key,
                              const std::string& field, Field grammar, bool required = true) const {
    auto value = text(table, key, field, required);
    if (!value) return value.error();
    if (value->empty() && !required) return value;
    if (auto ok = check_field(grammar, *value, where(table.get(key), field)); !ok)
      return ok.error();
    return value;
  }

  // "<file>:<line>: <field>", as errors and the validator name a value.
  std::string where(const toml::node* node, const std::string& field) const {
    const auto line = node != nullptr ? node->source().begin.line : fallback_line_;
    return path_ + ":" + std::to_string(line) + ": " + field;
  }

  // An archive's size: a whole number of bytes above zero (no archive is empty).
  Result<std::uint64_t> size(const toml::table& table, std::string_view key,
                             const std::string& field) const {
    const auto* node = table.get(key);
    const auto value = node != nullptr ? node->value<std::int64_t>() : std::nullopt;
    if (!value) return error(node, field, "must be an integer");
    if (*value <= 0)
      return make_error(ErrorKind::integrity,
                        where(node, field) + ": " + std::to_string(*value) +
                            " is not the size of an archive (a whole number of bytes above zero)",
                        hostile_hint);
    return static_cast<std::uint64_t>(*value);
  }

 private:
  const std::string& path_;
  std::size_t fallback_line_;
};

Result<LockedArchive> archive(const toml::node& node, const std::string& field,
                              const std::string& path) {
  const FieldReader read(path, node.source().begin.line);
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  LockedArchive out;
  for (auto [key, slot, grammar] :
       {std::tuple{"name", &out.name, Field::component_name},
        std::tuple{"version", &out.version, Field::component_version},
        std::tuple{"relative_path", &out.relative_path, Field::relative_path},
        std::tuple{"sha256", &out.sha256, Field::sha256}}) {
    auto value = read.checked(*table, key, field + "." + key, grammar);
    if (!value) return value.error();
    *slot = std::move(*value);
  }
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
  auto revision = read.checked(*database, "revision", "database.revision", Field::revision);
  if (!revision) return revision.error();
  auto digest = read.checked(*database, "sha256", "database.sha256", Field::sha256);
  if (!digest) return digest.error();
  lock.database_revision = *revision;
  lock.database_sha256 = *digest;
  if (const auto* request = subtable(root, "request")) {
    for (const auto& [key, node] : *request) {
      const auto at = "request." + text::printable(key.str());
      if (auto ok = check_field(Field::component_name, key.str(), read.where(&node, at)); !ok)
        return ok.error();
      auto value = read.text(*request, key.str(), "request." + std::string(key.str()));
      if (!value) return value.error();
      lock.request.emplace(std::string(key.str()), *value);
    }
  }
  return Ok{};
}

// A wheel's file name: one plain name (core/untrusted's) ending in .whl.
bool is_wheel_name(std::string_view name) {
  return text::ends_with(name, ".whl") && name.size() > 4 &&
         untrusted::is_valid(Field::component_name, name);
}

// An index's archives are wheels: each relative_path one wheel's file name, nothing with a folder.
Status check_wheel_names(const std::vector<LockedArchive>& archives, const std::string& field,
                         const std::string& path) {
  for (const auto& archive : archives) {
    if (is_wheel_name(archive.relative_path)) continue;
    return make_error(ErrorKind::integrity,
                      path + ": " + field + ".components." + text::printable(archive.name) +
                          ".relative_path: \"" + text::printable(archive.relative_path) +
                          "\" is not a wheel's file name (source = \"pypi\")",
                      hostile_hint);
  }
  return Ok{};
}

Status read_source(const toml::table& root, const std::string& path, LockFile& lock) {
  const FieldReader read(path, 1);
  auto source = read.text(root, "source", "source", false);
  if (!source) return source.error();
  if (source->empty()) return Ok{};  // locks written before sources: NVIDIA's archives
  if (*source != redist_source && *source != pypi_source)
    return make_error(ErrorKind::integrity,
                      read.where(root.get("source"), "source") + ": \"" + text::printable(*source) +
                          "\" is not redist or pypi",
                      hostile_hint);
  lock.source = *source;
  return Ok{};
}

Status read_toolkit(const toml::table& root, const std::string& path, LockFile& lock) {
  const FieldReader read(path, 1);
  if (auto source = read_source(root, path, lock); !source) return source;
  const auto* toolkit = subtable(root, "toolkit");
  if (toolkit == nullptr) return read.error(root.get("toolkit"), "[toolkit]", "is missing");
  auto version = read.checked(*toolkit, "version", "toolkit.version", Field::release_version);
  if (!version) return version.error();
  auto components = archives(*toolkit, "toolkit", path);
  if (!components) return components.error();
  if (lock.source == pypi_source) {
    if (auto wheels = check_wheel_names(*components, "toolkit", path); !wheels) return wheels;
  }
  lock.toolkit = LockedToolkit{*version, std::move(*components)};
  const auto* cudnn = subtable(root, "cudnn");
  if (cudnn == nullptr) return Ok{};
  auto cudnn_version = read.checked(*cudnn, "version", "cudnn.version", Field::release_version);
  if (!cudnn_version) return cudnn_version.error();
  auto variant = read.checked(*cudnn, "cuda_variant", "cudnn.cuda_variant", Field::component_name);
  if (!variant) return variant.error();
  // The build for the toolkit's major: "cuda12" beside toolkit 12.x, and nothing else.
  const auto major = lock.toolkit.version.substr(0, lock.toolkit.version.find('.'));
  if (*variant != "cuda" + major)
    return make_error(ErrorKind::integrity,
                      read.where(cudnn->get("cuda_variant"), "cudnn.cuda_variant") + ": \"" +
                          text::printable(*variant) + "\" is not the build for CUDA " +
                          text::printable(lock.toolkit.version) + " (cuda" + major + ")",
                      hostile_hint);
  auto cudnn_components = archives(*cudnn, "cudnn", path);
  if (!cudnn_components) return cudnn_components.error();
  if (lock.source == pypi_source) {
    if (auto wheels = check_wheel_names(*cudnn_components, "cudnn", path); !wheels) return wheels;
  }
  lock.cudnn = LockedCudnn{*cudnn_version, *variant, std::move(*cudnn_components)};
  return Ok{};
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
      return make_error(ErrorKind::integrity,
                        read.where(wheel->get("filename"), at + ".filename") + ": \"" +
                            text::printable(*filename) + "\" is not a wheel's file name",
                        hostile_hint);
    auto sha256 = read.checked(*wheel, "sha256", at + ".sha256", Field::sha256, false);
    if (!sha256) return sha256.error();
    out.push_back({std::move(*filename), std::move(*sha256)});
  }
  return out;
}

// An exact version ("2.5.1+cu124"), or the series form earlier locks wrote ("2.5.*+cu124"),
// which `lock --check` then reports stale.
struct SeriesVersion {
  std::string head;  // "2.5.*"
  std::string tag;   // "cu124", or empty
};
std::optional<SeriesVersion> series_version(std::string_view version) {
  const auto plus = version.find('+');
  SeriesVersion out{std::string(version.substr(0, plus)),
                    plus == std::string_view::npos ? "" : std::string(version.substr(plus + 1))};
  if (!text::ends_with(out.head, ".*") ||
      !untrusted::is_valid(Field::release_version, out.head.substr(0, out.head.size() - 2)))
    return std::nullopt;
  if (plus != std::string_view::npos && !untrusted::is_valid(Field::component_name, out.tag))
    return std::nullopt;
  return out;
}

bool is_framework_version(std::string_view version) {
  return untrusted::is_valid(Field::component_version, version) ||
         series_version(version).has_value();
}

// `companion_of = "torch"`: the entry is a companion wheel, installed after torch and imported
// under its own name, which must then be a distribution name (no extras).
Result<std::string> companion_field(const toml::table& table, std::string_view name,
                                    const FieldReader& read, const std::string& field) {
  auto value = read.text(table, "companion_of", field + ".companion_of", false);
  if (!value || value->empty()) return value;
  const auto where = read.where(table.get("companion_of"), field + ".companion_of");
  if (*value != companion_framework)
    return make_error(ErrorKind::integrity,
                      where + ": \"" + text::printable(*value) +
                          "\" is not a framework companions are locked for (torch)",
                      hostile_hint);
  if (!untrusted::is_valid(Field::python_package, name) || name.find('[') != std::string::npos)
    return make_error(ErrorKind::integrity,
                      read.where(table.get("companion_of"), field) +
                          ": a companion must be named by its package (PEP 503)",
                      hostile_hint);
  return value;
}

Result<LockedFramework> framework(const toml::node& node, std::string_view name,
                                  const std::string& path) {
  const auto field = "frameworks." + text::printable(name);
  const FieldReader read(path, node.source().begin.line);
  if (auto ok = check_field(Field::component_name, name, read.where(&node, field)); !ok)
    return ok.error();
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  LockedFramework out;
  auto version = read.text(*table, "version", field + ".version");
  if (!version) return version.error();
  if (!is_framework_version(*version))
    return make_error(ErrorKind::integrity,
                      read.where(table->get("version"), field + ".version") + ": \"" +
                          text::printable(*version) +
                          "\" is not a framework version (like 2.5.1+cu124)",
                      hostile_hint);
  out.version = std::move(*version);
  auto index = read.checked(*table, "index_url", field + ".index_url", Field::url, false);
  if (!index) return index.error();
  out.index_url = std::move(*index);
  auto pip = read.text(*table, "pip", field + ".pip");
  if (!pip) return pip.error();
  out.pip = std::move(*pip);
  auto args = parse_pip_line(out.pip, name, out, read.where(table->get("pip"), field + ".pip"));
  if (!args) return args.error();
  out.pip_args = std::move(*args);
  auto wheels = framework_wheels(*table, field, path);
  if (!wheels) return wheels.error();
  out.wheels = std::move(*wheels);
  auto companion = companion_field(*table, name, read, field);
  if (!companion) return companion.error();
  out.companion_of = std::move(*companion);
  return out;
}

Status read_frameworks(const toml::table& root, const std::string& path, LockFile& lock) {
  const auto* frameworks = subtable(root, "frameworks");
  if (frameworks == nullptr) return Ok{};
  for (const auto& [name, node] : *frameworks) {
    auto one = framework(node, name.str(), path);
    if (!one) return one.error();
    lock.frameworks.emplace(std::string(name.str()), std::move(*one));
  }
  return Ok{};
}

// A receipt's date, as `verify --record` writes it: "2026-11-30T12:00:00Z".
bool is_timestamp(std::string_view value) {
  constexpr std::string_view shape = "0000-00-00T00:00:00Z";
  if (value.size() != shape.size() || !untrusted::is_valid(Field::date, value.substr(0, 10)))
    return false;
  for (std::size_t i = 10; i < shape.size(); ++i) {
    const bool digit = value[i] >= '0' && value[i] <= '9';
    if (shape[i] == '0' ? !digit : value[i] != shape[i]) return false;
  }
  return true;
}

Result<Receipt> receipt(const toml::node& node, const std::string& field, const std::string& path) {
  const FieldReader read(path, node.source().begin.line);
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  Receipt out;
  auto gpu = read.text(*table, "gpu", field + ".gpu");  // shown only, always escaped
  if (!gpu) return gpu.error();
  out.gpu = std::move(*gpu);
  for (auto [key, slot, grammar] : {std::tuple{"arch", &out.arch, Field::release_version},
                                    std::tuple{"driver", &out.driver, Field::release_version},
                                    std::tuple{"toolkit", &out.toolkit, Field::release_version},
                                    std::tuple{"report_sha256", &out.report_sha256, Field::sha256},
                                    std::tuple{"locked_set", &out.locked_set, Field::sha256}}) {
    auto value = read.checked(*table, key, field + "." + key, grammar);
    if (!value) return value.error();
    *slot = std::move(*value);
  }
  auto date = read.text(*table, "date", field + ".date");
  if (!date) return date.error();
  if (!is_timestamp(*date))
    return make_error(ErrorKind::integrity,
                      read.where(table->get("date"), field + ".date") + ": \"" +
                          text::printable(*date) + "\" is not a UTC time (2026-11-30T12:00:00Z)",
                      hostile_hint);
  out.date = std::move(*date);
  return out;
}

Result<std::vector<std::string>> string_list(const toml::table& table, std::string_view key,
                                             const std::string& field, const FieldReader& read,
                                             Field grammar = Field::release_version) {
  std::vector<std::string> out;
  const auto* node = table.get(key);
  const auto* list = node != nullptr ? node->as_array() : nullptr;
  if (list == nullptr) return read.error(node, field, "must be a list of strings");
  for (const auto& item : *list) {
    const auto value = item.value<std::string>();
    if (!value) return read.error(&item, field, "must be a list of short strings");
    if (auto ok = check_field(grammar, *value, read.where(&item, field)); !ok) return ok.error();
    out.push_back(*value);
  }
  return out;
}

// "8.0;9.0" (each a compute capability) or "80;90" (each its digits): what a build reads.
bool is_arch_list(std::string_view value, bool digits_only) {
  const auto parts = text::split(value, ';');
  return !value.empty() && std::all_of(parts.begin(), parts.end(), [&](const std::string& part) {
    if (!digits_only) return untrusted::is_valid(Field::release_version, part);
    return part.size() >= 2 && part.size() <= 4 &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  });
}

Status check_settings(const toml::table& table, const std::string& field, const FieldReader& read,
                      const LockedTarget& out) {
  if (out.mode != "full" && out.mode != "minor-compat" && out.mode != "forward-compat")
    return make_error(ErrorKind::integrity,
                      read.where(table.get("mode"), field + ".mode") + ": \"" +
                          text::printable(out.mode) +
                          "\" is not full, minor-compat or forward-compat",
                      hostile_hint);
  for (auto [key, value, digits] :
       {std::tuple{"TORCH_CUDA_ARCH_LIST", &out.torch_cuda_arch_list, false},
        std::tuple{"CMAKE_CUDA_ARCHITECTURES", &out.cmake_cuda_architectures, true}}) {
    if (!is_arch_list(*value, digits))
      return make_error(ErrorKind::integrity,
                        read.where(table.get(key), field + "." + key) + ": \"" +
                            text::printable(*value) + "\" is not a list of GPU architectures (" +
                            (digits ? "80;90" : "8.0;9.0") + ")",
                        hostile_hint);
  }
  return Ok{};
}

Result<LockedTarget> target(const toml::node& node, std::string_view name,
                            const std::string& path) {
  const auto field = "targets." + text::printable(name);
  const FieldReader read(path, node.source().begin.line);
  if (auto ok = check_field(Field::component_name, name, read.where(&node, field)); !ok)
    return ok.error();
  const auto* table = node.as_table();
  if (table == nullptr) return read.error(&node, field, "must be a table");
  LockedTarget out;
  auto driver = read.checked(*table, "driver", field + ".driver", Field::release_version);
  if (!driver) return driver.error();
  out.driver = std::move(*driver);
  for (auto [key, slot] :
       {std::pair{"mode", &out.mode}, std::pair{"TORCH_CUDA_ARCH_LIST", &out.torch_cuda_arch_list},
        std::pair{"CMAKE_CUDA_ARCHITECTURES", &out.cmake_cuda_architectures}}) {
    auto value = read.text(*table, key, field + "." + key);
    if (!value) return value.error();
    *slot = std::move(*value);
  }
  auto host =
      read.checked(*table, "CUDAHOSTCXX", field + ".CUDAHOSTCXX", Field::component_name, false);
  if (!host) return host.error();
  out.cudahostcxx = std::move(*host);
  if (auto ok = check_settings(*table, field, read, out); !ok) return ok.error();
  auto archs = string_list(*table, "arch", field + ".arch", read);
  if (!archs) return archs.error();
  out.archs = std::move(*archs);
  if (table->contains("gpu")) {  // the GPU models the target names, when it names some
    auto gpus = string_list(*table, "gpu", field + ".gpu", read, Field::gpu_model);
    if (!gpus) return gpus.error();
    out.gpus = std::move(*gpus);
  }
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
    auto one = target(node, name.str(), path);
    if (!one) return one.error();
    lock.targets.emplace(std::string(name.str()), std::move(*one));
  }
  return Ok{};
}

// One word of the line as the writer put it (resolve::pip_command): bare, or in double quotes
// when it holds a bracket. Nothing the grammars accept needs more.
std::string unquoted(const std::string& word) {
  if (word.size() >= 2 && word.front() == '"' && word.back() == '"')
    return word.substr(1, word.size() - 2);
  return word;
}

// PEP 503's normal form of a project name: lower case, each run of - _ . one "-".
std::string normalized(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool separator = c == '-' || c == '_' || c == '.';
    if (separator && !out.empty() && out.back() == '-') continue;
    out += separator ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Error pip_error(const std::string& where, std::string_view line, const std::string& why) {
  return make_error(ErrorKind::integrity,
                    where + ": \"" + text::printable(line, text::message_limit) + "\" " + why,
                    hostile_hint);
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

Result<std::vector<std::string>> parse_pip_line(std::string_view line, std::string_view name,
                                                const LockedFramework& framework,
                                                const std::string& where) {
  const auto words = text::split_whitespace(line);
  if (words.size() < 3 || words[0] != "pip" || words[1] != "install")
    return pip_error(where, line, "is not a `pip install` line");
  std::vector<std::string> args;
  bool requirement_seen = false;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const auto word = unquoted(words[i]);
    if (word == "-U") {
      args.push_back(word);
    } else if (word == "--index-url" && i + 1 < words.size()) {
      const auto url = unquoted(words[++i]);
      if (auto ok = check_field(Field::url, url, where + " --index-url"); !ok) return ok.error();
      if (url != framework.index_url)
        return pip_error(where, line, "names another index than index_url");
      args.insert(args.end(), {word, url});
    } else {
      const auto pin = word.find("==");
      const auto package = word.substr(0, pin);
      if (requirement_seen || pin == std::string::npos ||
          !untrusted::is_valid(Field::python_package, package))
        return pip_error(where, line,
                         "is not one requirement (package==version) with -U and --index-url");
      const auto pinned = word.substr(pin + 2);
      const auto series = series_version(framework.version);
      if (normalized(package.substr(0, package.find('['))) != normalized(name) ||
          (pinned != framework.version && (!series || pinned != series->head)))
        return pip_error(where, line,
                         "does not install " + text::printable(name) +
                             "==" + text::printable(framework.version));
      requirement_seen = true;
      args.push_back(word);
    }
  }
  if (!requirement_seen) return pip_error(where, line, "names no requirement");
  return args;
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
