#include "project/config.hpp"

#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/ownership.hpp"
#include "core/toml_guard.hpp"
#include "project/schema.hpp"

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

// The schema's verdict on the keys nobody reads (see Config::warnings).
Status check_unknown_keys(const toml::table& root, std::string_view text,
                          const std::filesystem::path& path, Config& config) {
  for (const auto& unknown : unknown_keys(root, config_keys())) {
    const auto where = path.string() + ":" + std::to_string(unknown.line) + ": ";
    if (unknown.suggests_cuda && !config.cuda)
      return make_error(ErrorKind::usage, where + unknown.problem + "; " + unknown.suggestion,
                        "write cuda = \"" + raw_value_on_line(text, unknown.line) +
                            "\" at the top of " + path.string());
    config.warnings.push_back(make_error(
        ErrorKind::usage, where + unknown.problem + " (ignored); " + unknown.suggestion));
  }
  return Ok{};
}

// The cluster keys (docs/cluster.md): where modulefiles go, and the read-only stores.
Status read_cluster_keys(const std::filesystem::path& path,
                         const toml::node_view<const toml::node>& view, Config& config) {
  auto dir = read_value<std::string>(path, view["modules_dir"], "modules_dir", "a string");
  if (!dir) return dir.error();
  config.modules_dir = *dir;
  auto format = read_value<std::string>(path, view["modules_format"], "modules_format", "a string");
  if (!format) return format.error();
  if (*format && **format != "lua" && **format != "tcl")
    return config_error(path, view["modules_format"].node()->source(),
                        "modules_format must be \"lua\" or \"tcl\"");
  config.modules_format = *format;
  const auto roots = view["system_roots"];
  if (!roots) return Ok{};
  const auto* list = roots.as_array();
  if (list == nullptr)
    return config_error(path, roots.node()->source(),
                        "system_roots must be a list of absolute paths: [\"/opt/cudaenv\"]");
  for (const auto& item : *list) {
    const auto* text = item.as_string();
    if (text == nullptr || text->get().empty() || text->get().front() != '/')
      return config_error(path, item.source(), "system_roots entries must be absolute paths");
    config.system_roots.push_back(text->get());
  }
  return Ok{};
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
  if (const auto* download = root.get("download"); download != nullptr && !download->is_table())
    return config_error(path, download->source(),
                        "download must be a table: a [download] line, then jobs = 8 below it");
  const toml::node_view<const toml::node> view{root};
  Config config;
  auto cuda = read_value<std::string>(path, view["cuda"], "cuda", "a string");
  auto mirror = read_value<std::string>(path, view["mirror"], "mirror", "a string");
  auto source = read_value<std::string>(path, view["source"], "source", "a string");
  auto index = read_value<std::string>(path, view["index_url"], "index_url", "a string");
  auto builds =
      read_value<std::string>(path, view["framework_index"], "framework_index", "a string");
  auto jobs = read_value<int64_t>(path, view["download"]["jobs"], "download.jobs", "an integer");
  auto ca = read_value<std::string>(path, view["download"]["ca_bundle"], "download.ca_bundle",
                                    "a string");
  auto stall = read_value<int64_t>(path, view["download"]["stall_timeout"],
                                   "download.stall_timeout", "an integer");
  for (const auto* failed :
       {cuda.ok() ? nullptr : &cuda.error(), mirror.ok() ? nullptr : &mirror.error(),
        jobs.ok() ? nullptr : &jobs.error(), ca.ok() ? nullptr : &ca.error(),
        stall.ok() ? nullptr : &stall.error(), source.ok() ? nullptr : &source.error(),
        index.ok() ? nullptr : &index.error(), builds.ok() ? nullptr : &builds.error()}) {
    if (failed != nullptr) return *failed;
  }
  config.cuda = *cuda;
  config.mirror = *mirror;
  config.source = *source;
  config.index_url = *index;
  config.framework_index = *builds;
  if (*jobs) config.jobs = static_cast<int>(**jobs);
  config.ca_bundle = *ca;
  if (*stall) config.stall_timeout = static_cast<int>(**stall);
  if (auto cluster = read_cluster_keys(path, view, config); !cluster) return cluster.error();
  if (auto checked = check_unknown_keys(root, text, path, config); !checked) return checked.error();
  return config;
}

}  // namespace cudaenv::project
