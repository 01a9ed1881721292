#include "project/selection.hpp"

#include <algorithm>

#include "core/paths.hpp"
#include "project/config.hpp"
#include "project/project_file.hpp"

namespace cudaenv::project {

Result<Selection> select(const Environment& env, const std::filesystem::path& cwd) {
  Selection selection;
  if (auto forced = env.get_nonempty("CUDAENV_VERSION")) {
    if (*forced == "system") return selection;
    auto spec = VersionSpec::parse(*forced);
    if (!spec)
      return make_error(ErrorKind::usage, "CUDAENV_VERSION: " + spec.error().message,
                        spec.error().hint);
    selection.cuda = *spec;
    selection.source = SelectionSource::environment;
    return selection;
  }
  if (auto file = find_project_file(cwd)) {
    auto parsed = read_project_file(*file);
    if (!parsed) return parsed.error();
    selection.cuda = parsed->cuda;
    selection.cudnn = parsed->cudnn;
    selection.host_compiler = parsed->host_compiler;
    selection.source = SelectionSource::project_file;
    selection.file = *file;
    selection.warnings = std::move(parsed->warnings);
    return selection;
  }
  const auto config_path = paths::config_file(env);
  auto config = load_config(config_path);
  if (!config) return config.error();
  selection.warnings = std::move(config->warnings);
  if (config->cuda) {
    auto spec = VersionSpec::parse(*config->cuda);
    if (!spec)
      return make_error(ErrorKind::failure,
                        config_path.string() + ": cuda: " + spec.error().message);
    selection.cuda = *spec;
    selection.source = SelectionSource::global_config;
    selection.file = config_path;
  }
  return selection;
}

namespace {

// The cuda_nvcc component's version in an install's receipt.
std::optional<Version> receipt_nvcc(const install::Installed& installed) {
  if (!installed.receipt) return std::nullopt;
  for (const auto& component : installed.receipt->components) {
    if (component.name == "cuda_nvcc") return Version::parse(component.version);
  }
  return std::nullopt;
}

}  // namespace

bool spec_names_toolkit(const VersionSpec& spec, const std::vector<Version>& releases,
                        const std::optional<Version>& nvcc) {
  if (releases.empty()) return nvcc && spec.matches(*nvcc);
  if (std::any_of(releases.begin(), releases.end(),
                  [&](const Version& release) { return spec.matches(release); }))
    return true;
  return nvcc && spec.is_exact_beyond(2) && spec.matches(*nvcc);
}

std::optional<install::Installed> installed_match(const Selection& selection,
                                                  const install::Store& store,
                                                  install::Receipts receipts) {
  if (!selection.cuda) return std::nullopt;
  for (auto& installed : install::installed_toolkits(store, receipts)) {  // newest first
    if (selection.cuda->matches(installed.version)) return installed;
  }
  // Only a spec written out exactly can be a compiler's version; receipts are read only then, so
  // the prompt hook's usual case stays as cheap as before.
  if (!selection.cuda->is_exact_beyond(2)) return std::nullopt;
  for (auto& installed : install::installed_toolkits(store, install::Receipts::read)) {
    if (spec_names_toolkit(*selection.cuda, {installed.version}, receipt_nvcc(installed)))
      return installed;
  }
  return std::nullopt;
}

std::optional<install::Installed> installed_cudnn_match(const VersionSpec& spec, int cuda_major,
                                                        const install::Store& store,
                                                        install::Receipts receipts) {
  const auto variant = "-cuda" + std::to_string(cuda_major);
  for (auto& installed : install::installed_cudnn(store, receipts)) {  // newest first
    const auto name = installed.path.filename().string();
    if (spec.matches(installed.version) && name.ends_with(variant)) return installed;
  }
  return std::nullopt;
}

std::string describe_source(const Selection& selection) {
  switch (selection.source) {
    case SelectionSource::command_line: return "--cuda";
    case SelectionSource::environment: return "CUDAENV_VERSION";
    case SelectionSource::project_file:
    case SelectionSource::global_config: return selection.file.string();
    case SelectionSource::system: return "system";
  }
  return "system";
}

}  // namespace cudaenv::project
