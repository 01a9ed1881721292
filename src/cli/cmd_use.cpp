// `cudaenv use` (pin a version in .cudaenv or the global config) and `cudaenv rehash`.
#include "activate/here.hpp"
#include "activate/host_compiler.hpp"
#include "activate/shims.hpp"
#include "activate/toolkit_env.hpp"
#include "cli/commands.hpp"
#include "core/files.hpp"
#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "manifest/load.hpp"
#include "project/config.hpp"
#include "project/file_access.hpp"
#include "project/file_edit.hpp"
#include "project/project_file.hpp"
#include "project/selection.hpp"
#include "project/stores.hpp"
#include "resolve/toolkit_identity.hpp"

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

struct Edited {
  std::string text;
  std::vector<Error> warnings;  // keys the new text holds that nobody reads
};

// A file's new text, refused (and the file left as it is) when its parser refuses it.
template <typename Parsed>
Result<Edited> checked(std::string text, const fs::path& path, const Result<Parsed>& parsed) {
  if (!parsed)
    return make_error(parsed.error().kind,
                      "cannot update " + path.string() + ": " + parsed.error().message,
                      "fix the file by hand first; it was left as it is");
  return Edited{std::move(text), parsed->warnings};
}

// The project file's new text, checked by the same parser the hook uses before anything is written.
Result<Edited> edited_project_file(const fs::path& path, const UseOptions& options) {
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
  return checked(text, path, project::parse_project_file(text, path.string()));
}

Result<Edited> edited_config(const fs::path& path, const UseOptions& options) {
  if (!options.cudnn.empty() || !options.torch.empty() || !options.tensorflow.empty() ||
      !options.jax.empty())
    return make_error(ErrorKind::usage, "--global sets only the default CUDA version",
                      "pin cuDNN and frameworks per project: cudaenv use SPEC --cudnn …");
  const auto existing = read_small_file_or_empty(path);
  if (!existing) return existing.error();
  const auto text = project::set_string_key(*existing, "", "cuda", options.spec);
  return checked(text, path, project::parse_config(text, path));
}

bool pins_framework(const UseOptions& options) {
  return !options.torch.empty() || !options.tensorflow.empty() || !options.jax.empty();
}

Status validate_specs(const UseOptions& options) {
  if (options.unset && !options.spec.empty())
    return make_error(ErrorKind::usage, "--unset takes no SPEC",
                      "cudaenv use --unset removes this directory's pin; cudaenv use SPEC sets it");
  if (!options.unset && options.spec.empty() &&
      (options.global || (!pins_framework(options) && options.cudnn.empty())))
    return make_error(ErrorKind::usage, "SPEC is required",
                      "cudaenv use 12.4 pins a version here (or a framework alone: cudaenv use "
                      "--torch 2.9); cudaenv use --unset removes the pin");
  if (options.unset || (options.global && options.spec == "system")) return Ok{};
  if (options.spec == "system")
    return make_error(ErrorKind::usage,
                      "SPEC: \"system\" is a pin only for --global (cudaenv use --global system)",
                      "to remove this directory's pin: cudaenv use --unset");
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

// The host compiler activation hands nvcc and CMake, or the package to install when none fits.
void print_host_compiler(const activate::Activated& activated, Context& context) {
  const auto& choice = *activated.host;  // the choice activation made, not a second one
  const auto why = text::printable(choice.reason, text::message_limit);
  if (!choice.missing_package.empty()) {
    context.err << "warning: nvcc will refuse the host compiler: " << why << '\n'
                << "hint: sudo apt install " << text::printable(choice.missing_package) << '\n';
  } else if (choice.compiler && !choice.user_choice) {
    context.out << "host compiler: " << text::printable(*choice.compiler, text::message_limit)
                << " (" << why << ")\n";
  }
}

Status install_if_missing(const UseOptions& options, Context& context) {
  InstallOptions install;
  install.spec = options.spec;
  install.cudnn = options.cudnn;
  install.download = options.download;
  return run_install_command(install, context);
}

fs::path target_file(const UseOptions& options, const Context& context) {
  return options.global ? paths::config_file(context.env)
                        : paths::working_directory(context.env) / project::project_file_name;
}

// The file `use` would replace is ours to replace: a trusted config, a .cudaenv of our own in a
// directory we can write. The hint offers what works without writing it.
Status check_target_file(const UseOptions& options, const Context& context) {
  const auto path = target_file(options, context);
  if (options.global) {
    if (auto trusted = ownership::check_config_file(path); !trusted) return trusted;
    return project::check_replaceable(path, "set XDG_CONFIG_HOME to a directory you own");
  }
  const auto instead = options.unset ? std::string("set CUDAENV_VERSION=system in your shell")
                                     : "set CUDAENV_VERSION=" + text::shell_quote(options.spec) +
                                           " in your shell instead";
  return project::check_replaceable(path, instead);
}

void print_warnings(const std::vector<Error>& warnings, Context& context) {
  for (const auto& warning : warnings)
    context.err << "warning: " << text::printable(warning.message, text::message_limit) << '\n';
}

// What applies here once the pin is gone: "13.0 (from ~/.config/cudaenv/config.toml)", "system".
void print_now(Context& context) {
  auto selection = project::select(context.env, paths::working_directory(context.env));
  if (!selection) return;  // said by the next command that reads it
  const bool nothing = selection->source == project::SelectionSource::system;
  context.out << "now here: "
              << (nothing ? std::string("system (nothing pins a version)")
                          : text::printable(activate::describe_selection(*selection),
                                            text::message_limit))
              << '\n';
}

Status write_or_remove(const fs::path& path, const std::string& text, bool remove) {
  if (!remove) return write_file_atomically(path, text);
  std::error_code ec;
  if (!fs::remove(path, ec) && ec)
    return make_error(ErrorKind::failure, "cannot remove " + path.string() + ": " + ec.message());
  return Ok{};
}

// --unset: the `cuda` line leaves this directory's .cudaenv, and the file goes when nothing
// else is set in it. A pin in a parent directory's .cudaenv is not touched: it is named.
Status unset_project_pin(const UseOptions& options, Context& context) {
  const auto cwd = paths::working_directory(context.env);
  const auto path = cwd / project::project_file_name;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) {
    if (auto nearest = project::find_project_file(cwd))
      return make_error(
          ErrorKind::not_found,
          "no .cudaenv in " + cwd.string() + "; the pin here comes from " + nearest->string(),
          "run cudaenv use --unset in " + nearest->parent_path().string());
    context.out << "nothing to unset: no .cudaenv in " << text::printable(cwd.string()) << '\n';
    return Ok{};
  }
  if (auto usable = check_target_file(options, context); !usable) return usable;
  const auto existing = read_small_file(path);
  if (!existing) return existing.error();
  const auto remaining = project::remove_key(project::bare_version_as_toml(*existing), "", "cuda");
  if (!remaining) {
    context.out << "nothing to unset: " << text::printable(path.string(), text::message_limit)
                << " pins no CUDA version\n";
    return Ok{};
  }
  const bool remove = !project::has_settings(*remaining);
  if (!remove) {
    auto edited = checked(*remaining, path, project::parse_project_file(*remaining, path.string()));
    if (!edited) return edited.error();
  }
  if (auto done = write_or_remove(path, *remaining, remove); !done) return done;
  const auto shown = text::printable(path.string(), text::message_limit);
  if (remove) {
    context.out << "removed " << shown << " (it set nothing but cuda)\n";
  } else {
    context.out << "removed cuda from " << shown
                << "; the file stays for its other settings, and selects the system toolkit\n";
  }
  print_now(context);
  return Ok{};
}

// --global system (or --global --unset): the `cuda` line leaves the config, which keeps its other
// settings and comments. Without a global pin the system toolkit applies outside projects.
Status unset_global_pin(const UseOptions& options, Context& context) {
  if (auto usable = check_target_file(options, context); !usable) return usable;
  const auto path = paths::config_file(context.env);
  const auto existing = read_small_file_or_empty(path);
  if (!existing) return existing.error();
  const auto remaining = project::remove_key(*existing, "", "cuda");
  const auto shown = text::printable(path.string(), text::message_limit);
  if (!remaining) {
    context.out << "no global pin to remove: " << shown << " sets no cuda\n";
  } else {
    auto edited = checked(*remaining, path, project::parse_config(*remaining, path));
    if (!edited) return edited.error();
    if (auto written = write_file_atomically(path, edited->text); !written) return written;
    context.out << "removed the global pin (cuda) from " << shown
                << "; outside projects the system toolkit applies\n";
  }
  print_now(context);
  return Ok{};
}

Status run_unpin(const UseOptions& options, Context& context) {
  if (!options.cudnn.empty() || !options.torch.empty() || !options.tensorflow.empty() ||
      !options.jax.empty() || options.install)
    return make_error(ErrorKind::usage, "unpinning takes no other flag than --global",
                      "cudaenv use --unset, or cudaenv use --global system");
  return options.global ? unset_global_pin(options, context) : unset_project_pin(options, context);
}

// A release the database does not know is most often a typo (12.14 for 12.4): refused before the
// file is written, unless it is installed already or --force says it is meant.
Status check_known_release(const UseOptions& options, Context& context) {
  if (options.force || options.spec.empty() || options.spec == "system") return Ok{};
  const auto spec = VersionSpec::parse(options.spec);
  if (!spec) return Ok{};  // validate_specs said so
  const auto store = project::store_for(context.env);
  project::Selection wanted;
  wanted.cuda = *spec;
  if (project::installed_match(wanted, store, install::Receipts::skip)) return Ok{};
  const auto db = manifest::load_default_database(store.root);
  if (!db || resolve::database_knows(*db, *spec)) return Ok{};
  return make_error(ErrorKind::not_found,
                    "CUDA " + text::printable(options.spec) +
                        " is not a release the database knows (newest known: " +
                        db->cuda_releases.back().version.str() + "); nothing was written",
                    "check the version ('cudaenv list-remote' lists a mirror's), run 'cudaenv db "
                    "update', or pin it anyway with --force");
}

}  // namespace

// --source, --index-url and --mirror say where --install downloads from: alone they do nothing.
Status check_download_flags(const UseOptions& options) {
  const auto& flags = options.download;
  if (options.install || (flags.source.empty() && flags.index_url.empty() && flags.mirror.empty()))
    return Ok{};
  const auto* flag = !flags.source.empty()      ? "--source"
                     : !flags.index_url.empty() ? "--index-url"
                                                : "--mirror";
  return make_error(ErrorKind::usage, std::string(flag) + " says where --install downloads from",
                    "add --install, or drop " + std::string(flag));
}

Status run_use(const UseOptions& options, Context& context) {
  if (auto valid = validate_specs(options); !valid) return valid;
  if (auto flags = check_download_flags(options); !flags) return flags;
  if (options.unset || (options.global && options.spec == "system")) {
    auto unpinned = run_unpin(options, context);
    if (unpinned) refresh_jupyter_kernels(context);
    return unpinned;
  }
  if (auto usable = check_target_file(options, context); !usable) return usable;
  if (auto trusted = ownership::check_data_root(paths::data_root(context.env)); !trusted)
    return trusted;
  if (auto known = check_known_release(options, context); !known) return known;
  const auto path = target_file(options, context);
  auto edited = options.global ? edited_config(path, options) : edited_project_file(path, options);
  if (!edited) return edited.error();
  warn_if_incompatible(options, context);
  if (options.install) {
    if (auto installed = install_if_missing(options, context); !installed) return installed;
  }
  if (auto written = write_file_atomically(path, edited->text); !written) return written;
  context.out << (options.spec.empty() ? std::string("pins")
                                       : "cuda = \"" + text::printable(options.spec) + "\"")
              << " written to " << text::printable(path.string(), text::message_limit) << '\n';
  print_warnings(edited->warnings, context);
  if (pins_framework(options)) print_pinned_pip_lines(context);
  auto activated = activate::activate_here(context.env, paths::working_directory(context.env));
  if (!activated) {
    context.err << "warning: " << text::printable(activated.error().message, text::message_limit);
    if (!activated.error().hint.empty())
      context.err << "; " << text::printable(activated.error().hint, text::message_limit);
    context.err << '\n';
  } else if (activated->toolkit) {
    context.out << "active here: CUDA " << activated->toolkit->version.str() << " ("
                << text::printable(activated->toolkit->path.string(), text::message_limit) << ")\n";
    if (activate::has_compiler(activated->toolkit->path)) {
      print_host_compiler(*activated, context);
    } else {
      const auto version = activated->toolkit->version.str();
      context.err << "warning: CUDA " << version
                  << " here is runtime-only (installed from a package index, no nvcc): builds "
                     "here have no CUDA compiler, and no other CUDA's is put in its place\n"
                  << "hint: for a compiler, cudaenv install " << version
                  << " --source redist --force\n";
    }
  }
  refresh_jupyter_kernels(context);
  return Ok{};
}

namespace {

Result<std::vector<std::string>> rehash_store(const install::Store& store) {
  if (auto trusted = ownership::check_data_root(store.root); !trusted) return trusted.error();
  return activate::rehash(store, paths::companion_program(activate::shim_program_name));
}

}  // namespace

void refresh_shims(Context& context) {
  auto tools = rehash_store(project::store_for(context.env));
  if (!tools)
    context.err << "warning: shims not updated: "
                << text::printable(tools.error().message, text::message_limit) << '\n';
  refresh_modules(context);
  refresh_jupyter_kernels(context);
}

Status run_rehash(Context& context) {
  const install::Store store = project::store_for(context.env);
  auto tools = rehash_store(store);
  if (!tools) return tools.error();
  context.out << tools->size() << " shims in "
              << text::printable(activate::shims_directory(store).string(), text::message_limit)
              << '\n';
  refresh_jupyter_kernels(context);
  return Ok{};
}

void add_use_commands(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<UseOptions>();
  auto* command = app.add_subcommand("use", "Pin a CUDA version for this directory (.cudaenv)");
  command->add_option("SPEC", options->spec,
                      "Version spec: 12, 12.4, 12.4.1, \">=12.1,<12.5\"; with --global, "
                      "\"system\" removes the global pin");
  command->add_flag("--global", options->global, "Set the default in the global config instead");
  command->add_flag("--unset", options->unset,
                    "Remove the pin: the cuda key of ./.cudaenv (the file when nothing else is "
                    "left), or with --global the config's");
  command->add_option("--cudnn", options->cudnn, "Also pin a cuDNN version");
  command->add_option("--torch", options->torch, "Pin a PyTorch version in [frameworks]");
  command->add_option("--tensorflow", options->tensorflow, "Pin a TensorFlow version");
  command->add_option("--jax", options->jax, "Pin a JAX CUDA plugin");
  command->add_flag("--install", options->install, "Install what is missing first");
  add_download_flags(*command, options->download);
  add_source_flags(*command, options->download);
  command->add_flag("--force", options->force,
                    "Pin a release the database does not know (after 'cudaenv db update')");
  command->callback([options, &context, &outcome] { outcome.status = run_use(*options, context); });

  auto* rehash =
      app.add_subcommand("rehash",
                         "Recreate the shims for the installed toolkits' tools, and refresh the "
                         "env of the Jupyter kernels cudaenv installed");
  rehash->callback([&context, &outcome] { outcome.status = run_rehash(context); });
}

}  // namespace cudaenv::cli
