// `cudaenv use` (pin a version in .cudaenv or the global config) and `cudaenv rehash`.
#include "activate/here.hpp"
#include "activate/shims.hpp"
#include "cli/commands.hpp"
#include "core/files.hpp"
#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "project/config.hpp"
#include "project/file_edit.hpp"
#include "project/project_file.hpp"

namespace cudaenv::cli {

namespace fs = std::filesystem;

namespace {

Result<std::optional<VersionSpec>> optional_spec(const char* flag, const std::string& text) {
  if (text.empty()) return std::optional<VersionSpec>{};
  auto spec = VersionSpec::parse(text);
  if (!spec)
    return make_error(ErrorKind::usage, std::string(flag) + ": " + spec.error().message,
                      spec.error().hint);
  return std::optional<VersionSpec>{*spec};
}

// The project file's new text, checked by the same parser the hook uses before anything is written.
Result<std::string> edited_project_file(const fs::path& path, const UseOptions& options) {
  const auto existing = read_small_file_or_empty(path);
  if (!existing) return existing.error();
  auto text = project::bare_version_as_toml(*existing);
  if (!options.spec.empty()) text = project::set_string_key(text, "", "cuda", options.spec);
  if (!options.cudnn.empty()) text = project::set_string_key(text, "", "cudnn", options.cudnn);
  const std::pair<const char*, const std::string*> frameworks[] = {
      {"torch", &options.torch}, {"tensorflow", &options.tensorflow}, {"jax", &options.jax}};
  for (const auto& [name, value] : frameworks) {
    if (!value->empty()) text = project::set_string_key(text, "frameworks", name, *value);
  }
  if (auto parsed = project::parse_project_file(text, path.string()); !parsed)
    return make_error(parsed.error().kind,
                      "cannot update " + path.string() + ": " + parsed.error().message,
                      "fix the file by hand first; it was left as it is");
  return text;
}

Result<std::string> edited_config(const fs::path& path, const UseOptions& options) {
  if (!options.cudnn.empty() || !options.torch.empty() || !options.tensorflow.empty() ||
      !options.jax.empty())
    return make_error(ErrorKind::usage, "--global sets only the default CUDA version",
                      "pin cuDNN and frameworks per project: cudaenv use SPEC --cudnn …");
  const auto existing = read_small_file_or_empty(path);
  if (!existing) return existing.error();
  const auto text = project::set_string_key(*existing, "", "cuda", options.spec);
  if (auto parsed = project::parse_config(text, path); !parsed)
    return make_error(parsed.error().kind,
                      "cannot update " + path.string() + ": " + parsed.error().message,
                      "fix the file by hand first; it was left as it is");
  return text;
}

Status validate_specs(const UseOptions& options) {
  const std::pair<const char*, const std::string*> specs[] = {{"SPEC", &options.spec},
                                                              {"--cudnn", &options.cudnn},
                                                              {"--torch", &options.torch},
                                                              {"--tensorflow", &options.tensorflow},
                                                              {"--jax", &options.jax}};
  for (const auto& [flag, value] : specs) {
    if (auto spec = optional_spec(flag, *value); !spec) return spec.error();
  }
  return Ok{};
}

// A warning, never a failure: the version may be meant for another machine (a cluster's nodes).
void warn_if_incompatible(const UseOptions& options, Context& context) {
  ResolveOptions resolve_options;
  resolve_options.cuda = options.spec;
  resolve_options.cudnn = options.cudnn;
  resolve_options.torch = options.torch;
  resolve_options.tensorflow = options.tensorflow;
  resolve_options.jax = options.jax;
  auto answer = resolve_here(resolve_options, context);
  if (!answer) {
    context.err << "warning: " << text::printable(answer.error().message, text::message_limit)
                << "; compatibility not checked\n";
    return;
  }
  const auto& resolution = answer->resolution;
  if (!resolution.ok()) {
    context.err << "warning: this machine cannot run CUDA " << text::printable(options.spec)
                << " as pinned";
    if (!resolution.rejected.empty())
      context.err << ": "
                  << text::printable(resolution.rejected.front().reason, text::message_limit);
    context.err << '\n';
    for (const auto& suggestion : resolution.suggestions)
      context.err << "hint: " << text::printable(suggestion, text::message_limit) << '\n';
    return;
  }
  for (const auto& warning : resolution.best().warnings)
    context.err << "warning: " << text::printable(warning, text::message_limit) << '\n';
}

Status install_if_missing(const UseOptions& options, Context& context) {
  InstallOptions install;
  install.spec = options.spec;
  install.cudnn = options.cudnn;
  return run_install_command(install, context);
}

}  // namespace

Status run_use(const UseOptions& options, Context& context) {
  const bool pins_framework =
      !options.torch.empty() || !options.tensorflow.empty() || !options.jax.empty();
  if (options.spec.empty() && (options.global || (!pins_framework && options.cudnn.empty())))
    return make_error(ErrorKind::usage, "SPEC: name the CUDA version to pin",
                      "cudaenv use 12.4, or pin a framework alone: cudaenv use --torch 2.9");
  if (auto valid = validate_specs(options); !valid) return valid;
  if (auto trusted = ownership::check_data_root(paths::data_root(context.env)); !trusted)
    return trusted;
  const auto path = options.global
                        ? paths::config_file(context.env)
                        : paths::working_directory(context.env) / project::project_file_name;
  if (options.global) {
    if (auto trusted = ownership::check_config_file(path); !trusted) return trusted;
  }
  auto text = options.global ? edited_config(path, options) : edited_project_file(path, options);
  if (!text) return text.error();
  warn_if_incompatible(options, context);
  if (options.install) {
    if (auto installed = install_if_missing(options, context); !installed) return installed;
  }
  if (auto written = write_file_atomically(path, *text); !written) return written;
  context.out << (options.spec.empty() ? std::string("pins")
                                       : "cuda = \"" + text::printable(options.spec) + "\"")
              << " written to " << text::printable(path.string(), text::message_limit) << '\n';
  if (pins_framework) print_pinned_pip_lines(context);
  auto activated = activate::activate_here(context.env, paths::working_directory(context.env));
  if (!activated) {
    context.err << "warning: " << text::printable(activated.error().message, text::message_limit);
    if (!activated.error().hint.empty())
      context.err << "; " << text::printable(activated.error().hint, text::message_limit);
    context.err << '\n';
  } else if (activated->toolkit) {
    context.out << "active here: CUDA " << activated->toolkit->version.str() << " ("
                << text::printable(activated->toolkit->path.string(), text::message_limit) << ")\n";
  }
  return Ok{};
}

namespace {

Result<std::vector<std::string>> rehash_store(const install::Store& store) {
  if (auto trusted = ownership::check_data_root(store.root); !trusted) return trusted.error();
  return activate::rehash(store, paths::companion_program(activate::shim_program_name));
}

}  // namespace

void refresh_shims(Context& context) {
  auto tools = rehash_store(install::Store{paths::data_root(context.env)});
  if (!tools)
    context.err << "warning: shims not updated: "
                << text::printable(tools.error().message, text::message_limit) << '\n';
}

Status run_rehash(Context& context) {
  const install::Store store{paths::data_root(context.env)};
  auto tools = rehash_store(store);
  if (!tools) return tools.error();
  context.out << tools->size() << " shims in "
              << text::printable(activate::shims_directory(store).string(), text::message_limit)
              << '\n';
  return Ok{};
}

void add_use_commands(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<UseOptions>();
  auto* command = app.add_subcommand("use", "Pin a CUDA version for this directory (.cudaenv)");
  command->add_option("SPEC", options->spec, "Version spec: 12, 12.4, 12.4.1, \">=12.1,<12.5\"");
  command->add_flag("--global", options->global, "Set the default in the global config instead");
  command->add_option("--cudnn", options->cudnn, "Also pin a cuDNN version");
  command->add_option("--torch", options->torch, "Pin a PyTorch version in [frameworks]");
  command->add_option("--tensorflow", options->tensorflow, "Pin a TensorFlow version");
  command->add_option("--jax", options->jax, "Pin a JAX CUDA plugin");
  command->add_flag("--install", options->install, "Install what is missing first");
  command->callback([options, &context, &outcome] { outcome.status = run_use(*options, context); });

  auto* rehash =
      app.add_subcommand("rehash", "Recreate the shims for the installed toolkits' tools");
  rehash->callback([&context, &outcome] { outcome.status = run_rehash(context); });
}

}  // namespace cudaenv::cli
