// `cudaenv modules write DIR [--format lua|tcl]`: Lmod / Environment Modules files for every
// toolkit and cuDNN build of the user's store and the system stores (docs/cluster.md).

#include "cli/commands.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "manifest/load.hpp"
#include "modules/collect.hpp"
#include "modules/write.hpp"
#include "project/config.hpp"
#include "project/stores.hpp"

namespace cudaenv::cli {

namespace {

Result<modules::Format> parse_format(const std::string& name) {
  if (name == "lua") return modules::Format::lua;
  if (name == "tcl") return modules::Format::tcl;
  return make_error(ErrorKind::usage, "--format must be lua or tcl, not " + text::printable(name),
                    "lua for Lmod, tcl for Environment Modules (Lmod reads both)");
}

// The user's store, then each system store, labelled for the modulefiles' help.
Result<std::vector<modules::LabelledStore>> labelled_stores(const Environment& env) {
  auto roots = project::system_roots(env);
  if (!roots) return roots.error();
  const auto store = project::store_for(env);
  std::vector<modules::LabelledStore> stores{
      {install::Store{store.root}, "user store " + store.root.string()}};
  for (const auto& root : store.shared_roots)
    stores.push_back({install::Store{root}, "system store " + root.string()});
  return stores;
}

Result<modules::WriteReport> write_modules(const std::string& dir, const std::string& format_name,
                                           Context& context) {
  auto format = parse_format(format_name);
  if (!format) return format.error();
  if (dir.empty() || dir.front() != '/')
    return make_error(
        ErrorKind::usage,
        "the modules directory must be an absolute path, not '" + text::printable(dir) + "'",
        "name it from the root, e.g. /opt/modulefiles");
  auto stores = labelled_stores(context.env);
  if (!stores) return stores.error();
  auto db = manifest::load_default_database(paths::data_root(context.env));
  if (!db) return db.error();
  auto files = modules::modulefiles(modules::collect(*stores, *db, context.env), *format);
  if (!files) return files.error();
  return modules::write_modulefiles(dir, *files);
}

}  // namespace

void refresh_modules(Context& context) {
  auto config = project::load_config(paths::config_file(context.env));
  if (!config || !config->modules_dir) return;
  auto written =
      write_modules(*config->modules_dir, config->modules_format.value_or("lua"), context);
  if (!written)
    context.err << "warning: modulefiles in "
                << text::printable(*config->modules_dir, text::message_limit)
                << " not updated: " << text::printable(written.error().message, text::message_limit)
                << '\n';
}

void add_modules_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto* command = app.add_subcommand("modules", "Lmod / Environment Modules files from the store");
  command->require_subcommand(1);
  auto dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("lua");
  auto* write = command->add_subcommand(
      "write", "Write cuda/<release> and cudnn/<version>-cuda<major> modulefiles into DIR");
  write->add_option("DIR", *dir, "The modules directory (module use DIR)")->required();
  write->add_option("--format", *format, "lua (Lmod, the default) or tcl (Environment Modules)");
  write->callback([dir, format, &context, &outcome] {
    auto written = write_modules(*dir, *format, context);
    if (!written) {
      outcome.status = written.error();
      return;
    }
    for (const auto& removed : written->removed)
      context.out << "removed " << text::printable(removed) << '\n';
    for (const auto& file : written->written)
      context.out << "wrote " << text::printable(file) << '\n';
    if (written->written.empty()) context.out << "no toolkits installed: nothing to write\n";
    context.out << "use them with: module use " << text::printable(*dir, text::message_limit)
                << '\n';
  });
}

}  // namespace cudaenv::cli
