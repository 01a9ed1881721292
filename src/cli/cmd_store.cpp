// `cudaenv list`, `cudaenv list-remote`, `cudaenv uninstall`: what is installed, what the mirror
// offers, and removing an install (a toolkit or a cuDNN build, by the specs install takes).

#include <unistd.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "activate/activation.hpp"
#include "activate/toolkit_env.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "here/active_toolkit.hpp"
#include "install/components.hpp"
#include "install/pypi_plan.hpp"
#include "install/remote.hpp"
#include "install/uninstall.hpp"
#include "manifest/load.hpp"
#include "probe/toolkits.hpp"
#include "project/config.hpp"
#include "project/selection.hpp"
#include "project/stores.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;

// A toolkit prefix installed from a package index without nvcc: NVIDIA's CUDA 11/12 wheels
// carry none.
bool runtime_only(const install::Installed& item) {
  return item.receipt && item.receipt->product == "cuda" && item.receipt->source == "pypi" &&
         !activate::has_compiler(item.path);
}

// Where an install came from: "redist" or "pypi"; receipts older than the field are redist's.
std::string source_of(const install::Installed& item) {
  return !item.receipt || item.receipt->source.empty() ? "redist" : item.receipt->source;
}

// The system store `path` lies in, or nullopt for the user's own root.
std::optional<std::filesystem::path> system_store_of(const install::Store& store,
                                                     const std::filesystem::path& path) {
  for (const auto& root : store.shared_roots) {
    const auto relative = path.lexically_relative(root);
    if (!relative.empty() && *relative.begin() != "..") return root;
  }
  return std::nullopt;
}

// Paths (a store's root comes from the environment, a system toolkit's from CUDA_HOME or PATH)
// and where a selection came from: escaped and cut before they reach a terminal.
std::string shown(const std::string& text) { return text::printable(text, text::message_limit); }

json installed_json(const std::vector<install::Installed>& items, const install::Store& store) {
  json list = json::array();
  for (const auto& item : items) {
    const auto system_store = system_store_of(store, item.path);
    json components = json::array();
    if (item.receipt) {
      for (const auto& c : item.receipt->components) components.push_back(c.name);
    }
    list.push_back(
        {{"version", item.version.str()},
         {"path", item.path.string()},
         {"variant", item.receipt ? json(item.receipt->variant) : json(nullptr)},
         {"installed_at", item.receipt ? json(item.receipt->installed_at) : json(nullptr)},
         {"mirror", item.receipt ? json(item.receipt->mirror) : json(nullptr)},
         {"source", item.receipt ? json(source_of(item)) : json(nullptr)},
         {"runtime_only", runtime_only(item)},
         {"components", components},
         {"store", system_store ? "system" : "user"},
         {"store_root", system_store ? system_store->string() : store.root.string()}});
  }
  return list;
}

// Named by release where the toolkit records none (resolve::name_toolkits), newest first.
std::vector<probe::ToolkitFacts> system_toolkits(Context& context, const manifest::Database* db) {
  auto found = probe::probe_toolkits(
      {context.sysroot, context.runner, context.env, paths::data_root(context.env)});
  std::erase_if(found, [](const auto& t) {
    return std::find(t.origins.begin(), t.origins.end(), probe::ToolkitOrigin::cudaenv) !=
           t.origins.end();
  });
  if (db) resolve::name_toolkits(*db, found);
  return found;
}

// " (system store DIR)" after a toolkit or cuDNN build a system store holds.
std::string store_note(const install::Store& store, const install::Installed& item) {
  const auto root = system_store_of(store, item.path);
  return root ? " (system store " + text::printable(root->string()) + ")" : std::string();
}

void print_installed(const std::vector<install::Installed>& items, const install::Store& store,
                     const char* label, Context& context) {
  context.out << styled(label, Tone::heading, context.colour) << '\n';
  if (items.empty()) context.out << "  (none)\n";
  for (const auto& item : items) {
    context.out << "  " << item.version.str();
    if (item.receipt && !item.receipt->variant.empty())
      context.out << " (" << text::printable(item.receipt->variant) << ")";
    context.out << store_note(store, item) << "  "
                << styled(shown(item.path.string()), Tone::dim, context.colour) << '\n';
  }
}

// Which listed toolkit applies in the current directory: here/'s answer (the selection's toolkit,
// or the system's in the one order doctor and verify follow), or what is missing.
struct Active {
  std::string path;  // empty: the selection is served by nothing
  std::string source;
  std::string wanted;   // the selected spec, for the "not installed" line
  std::string install;  // what `cudaenv install` takes for it: the release, never nvcc's version
  std::string missing;  // what is not installed, when it is not the toolkit (a pinned cuDNN)
};

std::optional<Active> active_toolkit(const std::vector<probe::ToolkitFacts>& system,
                                     const manifest::Database* db, Context& context) {
  auto here =
      here::find_here(activate::without_activation(context.env),
                      paths::working_directory(context.env), std::nullopt, &context.sysroot);
  if (!here) return std::nullopt;  // a broken .cudaenv is reported by the commands that use it
  const auto source = project::describe_source(here->selection);
  if (here->missing) {
    const auto& spec = *here->selection.cuda;
    return Active{"", source, spec.str(), db ? resolve::install_spec(*db, spec) : spec.str(),
                  here->toolkit ? here->missing->message : ""};
  }
  if (here->toolkit) {
    const auto& toolkit = *here->toolkit;
    return Active{toolkit.place == here::ToolkitPlace::system_prefix
                      ? toolkit.machine_path
                      : toolkit.installed.path.string(),
                  source, "", "", ""};
  }
  const auto active = here::active_toolkit(*here, system);
  if (!active.toolkit) return std::nullopt;
  return Active{active.toolkit->path, "system (" + active.selected_by + ")", "", "", ""};
}

std::string marker(const std::optional<Active>& active, const std::string& path) {
  return active && !active->path.empty() && active->path == path ? "* " : "  ";
}

Status run_list(const StoreOptions& options, Context& context) {
  if (auto roots = project::system_roots(context.env); !roots) return roots.error();
  const install::Store store = project::store_for(context.env);
  const auto toolkits = install::installed_toolkits(store);
  const auto cudnn = install::installed_cudnn(store);
  for (const auto* items : {&toolkits, &cudnn}) {
    if (auto readable = install::receipts_readable(*items); !readable) return readable.error();
  }
  const auto db = manifest::load_default_database(store.root);
  const auto* known = db ? &*db : nullptr;
  const auto system = system_toolkits(context, known);
  const auto active = active_toolkit(system, known, context);
  if (options.json) {
    json found = json::array();
    for (const auto& t : system) {
      found.push_back(
          {{"version", t.version ? json(t.version->str()) : json(nullptr)},
           {"nvcc_version", t.nvcc_version ? json(t.nvcc_version->str()) : json(nullptr)},
           {"name", resolve::toolkit_name(t)},
           {"path", t.path}});
    }
    json active_json =
        active ? json{{"path", active->path}, {"source", active->source}} : json(nullptr);
    context.out << json{{"installed", installed_json(toolkits, store)},
                        {"cudnn", installed_json(cudnn, store)},
                        {"system", found},
                        {"active", active_json}}
                       .dump(2)
                << '\n';
    return Ok{};
  }
  context.out << styled("Installed by cudaenv", Tone::heading, context.colour) << '\n';
  if (toolkits.empty()) context.out << "  (none)\n";
  for (const auto& item : toolkits) {
    context.out << marker(active, item.path.string()) << item.version.str();
    if (runtime_only(item)) context.out << " (runtime only: no nvcc)";
    if (item.receipt && source_of(item) == "pypi") context.out << " (from a package index)";
    context.out << store_note(store, item);
    context.out << "  " << styled(shown(item.path.string()), Tone::dim, context.colour) << '\n';
  }
  if (!cudnn.empty()) print_installed(cudnn, store, "cuDNN", context);
  context.out << styled("Found on the system", Tone::heading, context.colour) << '\n';
  if (system.empty()) context.out << "  (none)\n";
  for (const auto& t : system) {
    context.out << marker(active, t.path) << resolve::toolkit_name(t) << "  "
                << styled(shown(t.path), Tone::dim, context.colour) << '\n';
  }
  if (active && !active->path.empty())
    context.out << "* active here (" << shown(active->source) << ")\n";
  if (active && active->path.empty() && !active->missing.empty())
    context.out << shown(active->missing) << '\n';
  if (active && active->path.empty() && active->missing.empty()) {
    context.out << "CUDA " << shown(active->wanted) << " is selected here ("
                << shown(active->source) << ") but not installed: cudaenv install "
                << shown(active->install) << '\n';
  }
  return Ok{};
}

// From the source the flags and the config choose: NVIDIA's layout, or a package index (one
// without cuda-toolkit read through the database's redist rows, and said so on stderr).
Result<std::vector<Version>> remote_versions(const DownloadSetup& setup, const std::string& product,
                                             Context& context) {
  if (!setup.from_index())
    return install::list_remote_versions(setup.mirror, product, setup.settings.fetch);
  auto platform = install::detect_platform(context.sysroot);
  if (!platform) return platform.error();
  bool from_database = false;
  auto versions = install::list_index_versions(setup.index(), product, *platform, &from_database);
  if (versions && from_database)
    context.err << "cudaenv: note: cuda-toolkit is not on "
                << text::printable(setup.described(), text::message_limit)
                << "; listed: the releases whose cudart wheel it carries, by the database's "
                   "redist rows\n";
  return versions;
}

Status run_list_remote(const StoreOptions& options, Context& context) {
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  const std::string product = options.cudnn ? "cudnn" : "cuda";
  auto versions = remote_versions(*setup, product, context);
  if (!versions) return setup->explain(versions.error());
  const auto installed = options.cudnn ? install::installed_cudnn(setup->store)
                                       : install::installed_toolkits(setup->store);
  const auto is_installed = [&](const Version& v) {
    return std::any_of(installed.begin(), installed.end(),
                       [&](const auto& i) { return i.version == v; });
  };
  if (options.json) {
    json list = json::array();
    for (const auto& v : *versions)
      list.push_back({{"version", v.str()}, {"installed", is_installed(v)}});
    json document{{"source", setup->source_kind}};
    if (setup->from_index()) {
      document["index"] = setup->index_url;
    } else {
      document["mirror"] = setup->mirror;
    }
    document["product"] = product;
    document["versions"] = std::move(list);
    context.out << document.dump(2) << '\n';
    return Ok{};
  }
  for (const auto& v : *versions) {
    context.out << v.str()
                << (is_installed(v) ? styled("  (installed)", Tone::good, context.colour) : "")
                << '\n';
  }
  return Ok{};
}

// The toolkit the global config's `cuda` selects now, if any.
Result<std::optional<install::PinnedDefault>> global_pin(const install::Store& store,
                                                         Context& context) {
  const auto file = paths::config_file(context.env);
  auto config = project::load_config(file);
  if (!config) return config.error();
  if (!config->cuda) return std::optional<install::PinnedDefault>{};
  const auto spec = VersionSpec::parse(*config->cuda);
  if (!spec) return std::optional<install::PinnedDefault>{};
  project::Selection selection;
  selection.cuda = *spec;
  const auto match = project::installed_match(selection, store, install::Receipts::skip);
  if (!match) return std::optional<install::PinnedDefault>{};
  return std::optional<install::PinnedDefault>(
      install::PinnedDefault{*config->cuda, file, match->path});
}

// Both targets are chosen (and the pin checked) before anything is removed.
struct Removal {
  std::optional<install::Installed> toolkit;
  std::optional<install::Installed> cudnn;
};

// When what a user asked to remove is not in their own root but in a system store: that store
// is read-only to cudaenv for users, so say where it is and how its administrator removes it
// (ErrorKind::failure). Any other error is returned as it is.
Error system_store_refusal(const install::RemovalRequest& request, Error not_found,
                           Context& context) {
  if (not_found.kind != ErrorKind::not_found) return not_found;
  if (auto roots = project::system_roots(context.env); !roots) return not_found;
  const auto everything = project::store_for(context.env);
  const auto found = install::choose_installed(everything, request);
  if (!found) return not_found;
  const auto root = system_store_of(everything, found->path);
  if (!root) return not_found;
  const bool toolkit = request.product == install::Product::cuda;
  const auto name = toolkit ? found->version.str() : found->path.filename().string();
  const auto shown_root = text::printable(root->string(), text::message_limit);
  return make_error(
      ErrorKind::failure,
      (toolkit ? "CUDA " : "cuDNN ") + text::printable(name) + " is in the system store " +
          shown_root + ", which is read-only to cudaenv for users: nothing was removed",
      "the store's administrator removes it, as its owner: CUDAENV_ROOT=" + shown_root +
          " cudaenv uninstall " +
          (toolkit ? text::printable(name) : "--cudnn " + text::printable(name)));
}

Result<Removal> choose_removal(const StoreOptions& options, const install::Store& store,
                               Context& context) {
  Removal removal;
  if (!options.version.empty()) {
    const install::RemovalRequest request{install::Product::cuda, options.version, "SPEC",
                                          std::nullopt};
    auto toolkit = install::choose_installed(store, request);
    if (!toolkit) return system_store_refusal(request, toolkit.error(), context);
    auto pin = global_pin(store, context);
    if (!pin) return pin.error();
    if (auto allowed = install::check_not_pinned(*toolkit, *pin, options.force); !allowed)
      return allowed.error();
    removal.toolkit = std::move(*toolkit);
  }
  if (!options.cudnn_spec.empty()) {
    const auto major =
        removal.toolkit ? std::optional<int>(removal.toolkit->version.major()) : std::nullopt;
    const install::RemovalRequest request{install::Product::cudnn, options.cudnn_spec, "--cudnn",
                                          major};
    auto cudnn = install::choose_installed(store, request);
    if (!cudnn) return system_store_refusal(request, cudnn.error(), context);
    removal.cudnn = std::move(*cudnn);
  }
  return removal;
}

// What applies here is about to lose its toolkit or cuDNN: asked on a terminal (as pyenv does),
// refused without one unless --yes. Every later command here would say "not installed".
Status confirm_active_removal(const Removal& removal, const StoreOptions& options,
                              Context& context) {
  if (options.yes) return Ok{};
  auto here = here::find_here(activate::without_activation(context.env),
                              paths::working_directory(context.env));
  if (!here || here->missing) return Ok{};
  // The global default is kept unless --force (check_not_pinned): that flag is the consent.
  if (options.force && here->selection.source == project::SelectionSource::global_config)
    return Ok{};
  const auto same = [](const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ec;
    return std::filesystem::equivalent(a, b, ec);
  };
  std::string what;
  if (removal.toolkit && here->toolkit &&
      same(removal.toolkit->path, here->toolkit->installed.path))
    what = "CUDA " + removal.toolkit->version.str();
  else if (removal.cudnn && here->cudnn && same(removal.cudnn->path, here->cudnn->path))
    what = "cuDNN " + removal.cudnn->path.filename().string();
  if (what.empty()) return Ok{};
  const auto source =
      text::printable(project::describe_source(here->selection), text::message_limit);
  const auto question = text::printable(what) + " is active here (from " + source + ")";
  if (::isatty(STDIN_FILENO) == 0)
    return make_error(ErrorKind::failure, question + ": nothing was removed",
                      "pass --yes to remove it anyway (commands here will then say it is not "
                      "installed)");
  context.err << question << "; remove it? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer) || (answer != "y" && answer != "Y" && answer != "yes"))
    return make_error(ErrorKind::failure, "nothing was removed", "");
  return Ok{};
}

Status run_uninstall(const StoreOptions& options, Context& context) {
  if (options.version.empty() && options.cudnn_spec.empty()) {
    return make_error(ErrorKind::usage, "uninstall: name what to remove",
                      "cudaenv uninstall SPEC (a toolkit), or cudaenv uninstall --cudnn SPEC");
  }
  const install::Store store{paths::data_root(context.env)};
  auto removal = choose_removal(options, store, context);
  if (!removal) return removal.error();
  if (auto confirmed = confirm_active_removal(*removal, options, context); !confirmed)
    return confirmed;
  if (removal->toolkit) {
    const auto what = "CUDA " + removal->toolkit->version.str();
    if (auto removed = install::remove_installed(removal->toolkit->path, what); !removed)
      return removed.error();
    context.out << "removed " << what << '\n';
    refresh_shims(context);
  }
  if (removal->cudnn) {
    const auto name = removal->cudnn->path.filename().string();
    if (auto removed = install::remove_installed(removal->cudnn->path, "cuDNN " + name); !removed)
      return removed.error();
    context.out << "removed cuDNN " << text::printable(name) << '\n';
  }
  return Ok{};
}

}  // namespace

void add_store_commands(CLI::App& app, Context& context, Outcome& outcome) {
  auto list = std::make_shared<StoreOptions>();
  auto* list_command =
      app.add_subcommand("list", "Installed toolkits and cuDNN, and toolkits found on the system");
  list_command->add_flag("--json", list->json, "Print the list as JSON");
  list_command->callback([list, &context, &outcome] { outcome.status = run_list(*list, context); });

  auto remote = std::make_shared<StoreOptions>();
  auto* remote_command = app.add_subcommand(
      "list-remote", "Releases the mirror (or with --source pypi the index) offers, newest first");
  remote_command->add_flag("--cudnn", remote->cudnn,
                           "List cuDNN releases instead of CUDA toolkits");
  remote_command->add_flag("--json", remote->json, "Print the list as JSON");
  add_download_flags(*remote_command, remote->download);
  add_source_flags(*remote_command, remote->download);
  remote_command->callback(
      [remote, &context, &outcome] { outcome.status = run_list_remote(*remote, context); });

  auto uninstall = std::make_shared<StoreOptions>();
  auto* uninstall_command =
      app.add_subcommand("uninstall", "Remove an installed toolkit or cuDNN build");
  uninstall_command->add_option(
      "SPEC", uninstall->version,
      "The installed toolkit: a spec as install takes it (13.2, 12.4.1); several matching: none "
      "is removed");
  uninstall_command->add_option("--cudnn", uninstall->cudnn_spec,
                                "Remove the installed cuDNN build matching this spec (9.1, "
                                "9.1.0-cuda12)");
  uninstall_command->add_flag("--force", uninstall->force,
                              "Also remove the toolkit the global config pins");
  uninstall_command->add_flag("--yes", uninstall->yes,
                              "Also remove the toolkit or cuDNN active here, without asking");
  uninstall_command->callback(
      [uninstall, &context, &outcome] { outcome.status = run_uninstall(*uninstall, context); });
}

}  // namespace cudaenv::cli
