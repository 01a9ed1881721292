#include "project/config.hpp"

#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/ownership.hpp"
#include "core/toml_guard.hpp"

namespace cudaenv::project {

namespace {

Error config_error(const std::filesystem::path& path, std::size_t line,
                   const std::string& problem) {
  return make_error(ErrorKind::usage, path.string() + ":" + std::to_string(line) + ": " + problem,
                    "fix or remove the configuration file");
}

Error config_error(const std::filesystem::path& path, const toml::source_region& where,
                   const std::string& problem) {
  return config_error(path, where.begin.line, problem);
}

template <typename T>
Result<std::optional<T>> read_value(const std::filesystem::path& path,
                                    const toml::node_view<const toml::node>& node, const char* key,
                                    const char* type_name) {
  if (!node) return std::optional<T>{};
  if (auto value = node.value<T>()) return std::optional<T>{*value};
  return config_error(path, node.node()->source(), std::string(key) + " must be " + type_name);
}

}  // namespace

Result<Config> load_config(const std::filesystem::path& path) {
  if (auto trusted = ownership::check_config_file(path); !trusted) return trusted.error();
  const auto text = read_small_file_or_empty(path);
  if (!text)
    return make_error(ErrorKind::failure, text.error().message, "make it a small text file");
  return parse_config(*text, path);
}

Result<Config> parse_config(std::string_view text, const std::filesystem::path& path) {
  if (const auto bad = toml_text_problem(text)) return config_error(path, bad->line, bad->problem);
  toml::table root;
  try {
    root = toml::parse(text, path.string());
  } catch (const toml::parse_error& e) {
    return config_error(path, e.source(), std::string(e.description()));
  }
  const toml::node_view<const toml::node> view{root};
  Config config;
  auto cuda = read_value<std::string>(path, view["cuda"], "cuda", "a string");
  auto mirror = read_value<std::string>(path, view["mirror"], "mirror", "a string");
  auto jobs = read_value<int64_t>(path, view["download"]["jobs"], "download.jobs", "an integer");
  auto ca = read_value<std::string>(path, view["download"]["ca_bundle"], "download.ca_bundle",
                                    "a string");
  auto stall = read_value<int64_t>(path, view["download"]["stall_timeout"],
                                   "download.stall_timeout", "an integer");
  for (const auto* failed :
       {cuda.ok() ? nullptr : &cuda.error(), mirror.ok() ? nullptr : &mirror.error(),
        jobs.ok() ? nullptr : &jobs.error(), ca.ok() ? nullptr : &ca.error(),
        stall.ok() ? nullptr : &stall.error()}) {
    if (failed != nullptr) return *failed;
  }
  config.cuda = *cuda;
  config.mirror = *mirror;
  if (*jobs) config.jobs = static_cast<int>(**jobs);
  config.ca_bundle = *ca;
  if (*stall) config.stall_timeout = static_cast<int>(**stall);
  return config;
}

}  // namespace cudaenv::project
