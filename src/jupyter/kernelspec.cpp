#include "jupyter/kernelspec.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "core/files.hpp"
#include "core/paths.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"

namespace cudaenv::jupyter {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr const char* kernel_file = "kernel.json";

bool in_grammar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string shown(const fs::path& path) {
  return text::printable(path.string(), text::message_limit);
}

// jupyter_client (7 and later) expands ${NAME} in env values from the server's environment: a
// '$' that is part of a path is written "$$" so that the kernel gets it as it is.
std::string template_escaped(const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '$') escaped += '$';
    escaped += c;
  }
  return escaped;
}

std::string template_unescaped(const std::string& value) {
  std::string plain;
  for (std::size_t i = 0; i < value.size(); ++i) {
    plain += value[i];
    if (value[i] == '$' && i + 1 < value.size() && value[i + 1] == '$') ++i;
  }
  return plain;
}

// kernel.json as read back: a user's file, so bounded (read_small_file) and checked for shape.
Result<json> read_kernel_document(const fs::path& file) {
  auto text = read_small_file(file);
  if (!text) return text.error();
  auto document = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object())
    return make_error(ErrorKind::failure, shown(file) + " is not a kernelspec (a JSON object)",
                      "remove it with jupyter kernelspec remove, then cudaenv jupyter install");
  return document;
}

// metadata.cudaenv.project: the project a kernelspec cudaenv wrote belongs to; nullopt when the
// kernelspec is not one of cudaenv's or names no absolute directory.
std::optional<fs::path> project_of(const json& document) {
  const auto metadata = document.find("metadata");
  if (metadata == document.end() || !metadata->is_object()) return std::nullopt;
  const auto ours = metadata->find("cudaenv");
  if (ours == metadata->end() || !ours->is_object()) return std::nullopt;
  const auto project = ours->find("project");
  if (project == ours->end() || !project->is_string()) return std::nullopt;
  fs::path path(project->get<std::string>());
  if (!path.is_absolute()) return std::nullopt;
  return path.lexically_normal();
}

// kernel.json's env as written: values are templates (template_escaped).
std::map<std::string, std::string> env_of(const json& document) {
  std::map<std::string, std::string> env;
  const auto found = document.find("env");
  if (found == document.end() || !found->is_object()) return env;
  for (const auto& [name, value] : found->items()) {
    if (value.is_string()) env[name] = value.get<std::string>();
  }
  return env;
}

json env_document(const std::map<std::string, std::string>& templates) {
  json document = json::object();
  for (const auto& [name, value] : templates) document[name] = value;
  return document;
}

// `old` (templates, kept as the user wrote them) without the variables activation manages, plus
// `project`'s, escaped.
std::map<std::string, std::string> merged_env(std::map<std::string, std::string> old,
                                              const std::map<std::string, std::string>& project) {
  for (const auto& name : activate::managed_variables()) old.erase(name);
  for (const auto& [name, value] : project) old[name] = template_escaped(value);
  return old;
}

Status write_registry(const fs::path& data_root, const std::vector<fs::path>& directories) {
  json document;
  document["schema_version"] = 1;
  document["kernelspecs"] = json::array();
  for (const auto& directory : directories) document["kernelspecs"].push_back(directory.string());
  return write_file_atomically(registry_file(data_root), document.dump(2) + "\n");
}

Status add_to_registry(const fs::path& data_root, const fs::path& directory) {
  auto listed = registered_kernelspecs(data_root);
  if (!listed) return listed.error();
  if (std::find(listed->begin(), listed->end(), directory) != listed->end()) return Ok{};
  listed->push_back(directory);
  return write_registry(data_root, *listed);
}

Status remove_from_registry(const fs::path& data_root, const std::vector<fs::path>& gone) {
  if (gone.empty()) return Ok{};
  auto listed = registered_kernelspecs(data_root);
  if (!listed) return listed.error();
  std::erase_if(*listed, [&](const fs::path& directory) {
    return std::find(gone.begin(), gone.end(), directory) != gone.end();
  });
  return write_registry(data_root, *listed);
}

bool exists_no_follow(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// One registered kernelspec brought to its project's environment.
Refresh refresh_one(const Environment& current, const fs::path& directory) {
  Refresh refresh{directory, "", false, ""};
  const auto file = directory / kernel_file;
  auto document = read_kernel_document(file);
  if (!document) {
    refresh.problem = document.error().message;
    return refresh;
  }
  const auto project = project_of(*document);
  if (!project) {
    refresh.problem = shown(file) + " names no project (metadata.cudaenv.project)";
    return refresh;
  }
  auto wanted = project_environment(current, *project);
  if (!wanted) {
    refresh.problem = wanted.error().message;
    return refresh;
  }
  refresh.cuda = wanted->cuda;
  const auto old = env_of(*document);
  const auto env = merged_env(old, wanted->variables);
  if (env == old) return refresh;
  (*document)["env"] = env_document(env);
  if (auto written = write_file_atomically(file, document->dump(1) + "\n"); !written) {
    refresh.problem = written.error().message;
    return refresh;
  }
  refresh.changed = true;
  return refresh;
}

}  // namespace

Status check_kernel_name(std::string_view name) {
  const bool valid = !name.empty() && name.size() <= kernel_name_limit && name != "." &&
                     name != ".." && std::all_of(name.begin(), name.end(), in_grammar);
  if (valid) return Ok{};
  return make_error(ErrorKind::usage,
                    "--name: \"" + text::printable(name) +
                        "\" is not a kernel name (letters, digits, '.', '_' and '-', at most " +
                        std::to_string(kernel_name_limit) + " characters)",
                    "for example: cudaenv jupyter install --name my-project");
}

std::string kernel_name(std::string_view name) { return lowercase(std::string(name)); }

std::string default_kernel_name(const fs::path& project_dir) {
  auto base = project_dir.lexically_normal().filename().string();
  if (base.empty()) base = project_dir.lexically_normal().parent_path().filename().string();
  std::string name = "cudaenv-";
  for (char c : base) name += in_grammar(c) ? c : '-';
  if (name == "cudaenv-") name = "cudaenv";
  return lowercase(name.substr(0, kernel_name_limit));
}

Result<fs::path> kernels_directory(const Environment& env) {
  if (auto data = env.get_nonempty("JUPYTER_DATA_DIR")) {
    const fs::path path(*data);
    if (!path.is_absolute())
      return make_error(ErrorKind::usage,
                        "JUPYTER_DATA_DIR is " + text::printable(*data, text::message_limit) +
                            ", not an absolute path",
                        "set it to an absolute directory, or unset it");
    return path.lexically_normal() / "kernels";
  }
  fs::path data_home;
  if (auto xdg = env.get_nonempty("XDG_DATA_HOME"); xdg && fs::path(*xdg).is_absolute()) {
    data_home = *xdg;
  } else {
    data_home = paths::home_directory(env) / ".local" / "share";
  }
  return data_home.lexically_normal() / "jupyter" / "kernels";
}

Result<ProjectEnvironment> project_environment(const Environment& current,
                                               const fs::path& project_dir) {
  auto activated = activate::activate_here(current, project_dir);
  if (!activated) return activated.error();
  ProjectEnvironment result;
  if (!activated->toolkit) return result;
  result.cuda = activated->toolkit->version.str();
  for (const auto& name : activate::managed_variables()) {
    const auto after = activated->environment.get(name);
    if (after && after != activated->base.get(name)) result.variables[name] = *after;
  }
  return result;
}

std::string kernel_json(const KernelSpec& spec) {
  json document;
  document["argv"] = {spec.python.string(), "-m", "ipykernel_launcher", "-f", "{connection_file}"};
  document["display_name"] = spec.display_name;
  document["language"] = "python";
  document["env"] = json::object();
  for (const auto& [name, value] : spec.env) document["env"][name] = template_escaped(value);
  document["metadata"]["cudaenv"]["project"] = spec.project.string();
  return document.dump(1) + "\n";
}

Status install_kernelspec(const fs::path& kernels, const KernelSpec& spec,
                          const fs::path& data_root) {
  if (auto valid = check_kernel_name(spec.name); !valid) return valid;
  const auto directory = kernels / spec.name;
  if (auto written = write_file_atomically(directory / kernel_file, kernel_json(spec)); !written)
    return written;
  return add_to_registry(data_root, directory);
}

fs::path registry_file(const fs::path& data_root) {
  return data_root / "jupyter" / "kernelspecs.json";
}

Result<std::vector<fs::path>> registered_kernelspecs(const fs::path& data_root) {
  const auto file = registry_file(data_root);
  auto text = read_small_file_or_empty(file);
  if (!text) return text.error();
  std::vector<fs::path> directories;
  if (text->empty()) return directories;
  const auto broken = make_error(ErrorKind::failure, shown(file) + " is not a list of kernelspecs",
                                 "remove it, then run cudaenv jupyter install again");
  const auto document = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return broken;
  const auto listed = document.find("kernelspecs");
  if (listed == document.end() || !listed->is_array()) return broken;
  for (const auto& entry : *listed) {
    if (!entry.is_string()) return broken;
    const fs::path directory(entry.get<std::string>());
    if (!directory.is_absolute()) return broken;
    directories.push_back(directory.lexically_normal());
  }
  return directories;
}

Result<std::vector<Refresh>> refresh_kernelspecs(const Environment& current,
                                                 const fs::path& data_root) {
  auto listed = registered_kernelspecs(data_root);
  if (!listed) return listed.error();
  std::vector<Refresh> refreshed;
  std::vector<fs::path> gone;
  for (const auto& directory : *listed) {
    if (!exists_no_follow(directory / kernel_file)) {
      gone.push_back(directory);
      continue;
    }
    refreshed.push_back(refresh_one(current, directory));
  }
  if (auto pruned = remove_from_registry(data_root, gone); !pruned) return pruned.error();
  return refreshed;
}

Result<std::vector<Installed>> installed_kernelspecs(const fs::path& data_root) {
  auto listed = registered_kernelspecs(data_root);
  if (!listed) return listed.error();
  std::vector<Installed> installed;
  for (const auto& directory : *listed) {
    auto document = read_kernel_document(directory / kernel_file);
    if (!document) continue;  // gone or broken: refresh_kernelspecs says so
    Installed entry{directory, "", ""};
    if (auto project = project_of(*document)) entry.project = project->string();
    const auto env = env_of(*document);
    if (auto active = env.find("CUDAENV_ACTIVE"); active != env.end())
      entry.cuda = template_unescaped(active->second);
    installed.push_back(std::move(entry));
  }
  return installed;
}

Status uninstall_kernelspec(const fs::path& kernels, const std::string& name,
                            const fs::path& data_root) {
  if (auto valid = check_kernel_name(name); !valid) return valid;
  const auto directory = kernels / name;
  const auto file = directory / kernel_file;
  if (!exists_no_follow(file))
    return make_error(ErrorKind::not_found,
                      "no kernelspec " + text::printable(name) + " in " + shown(kernels),
                      "cudaenv jupyter list names the kernelspecs cudaenv installed");
  auto document = read_kernel_document(file);
  if (!document) return document.error();
  if (!project_of(*document))
    return make_error(ErrorKind::usage,
                      shown(directory) + " is not a kernelspec cudaenv installed; it was left",
                      "remove it with jupyter kernelspec remove " + text::printable(name));
  std::error_code ec;
  if (!fs::remove(file, ec) && ec)
    return make_error(ErrorKind::failure, "cannot remove " + shown(file) + ": " + ec.message());
  fs::remove(directory, ec);  // only when empty: a logo the user added stays with its directory
  return remove_from_registry(data_root, {directory});
}

}  // namespace cudaenv::jupyter
