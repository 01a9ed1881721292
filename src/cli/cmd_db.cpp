// `cudaenv db [--json]`: the compatibility database in use, its revision, date and origin.
// `cudaenv db update [--mirror URL]`: a newer database from <mirror>/cudaenv/db/.

#include "cli/cmd_db.hpp"

#include <nlohmann/json.hpp>

#include "cli/download_setup.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/db_update.hpp"
#include "install/interrupt.hpp"
#include "manifest/load.hpp"

namespace cudaenv::cli {

namespace {

using manifest::DatabaseOrigin;
using json = nlohmann::ordered_json;

struct DbOptions {
  bool json = false;
  DownloadFlags download;
};

std::string shown(const std::string& read) { return text::printable(read, text::message_limit); }

const char* kind_name(DatabaseOrigin::Kind kind) {
  switch (kind) {
    case DatabaseOrigin::Kind::downloaded: return "downloaded";
    case DatabaseOrigin::Kind::local_copies: return "local-copies";
    case DatabaseOrigin::Kind::compiled_in: break;
  }
  return "compiled-in";
}

std::string source_line(const DatabaseOrigin& origin) {
  switch (origin.kind) {
    case DatabaseOrigin::Kind::downloaded:
      return "updated from " + shown(origin.url) + " at " + shown(origin.updated_at) + " (in " +
             shown(origin.directory.string()) + ")";
    case DatabaseOrigin::Kind::local_copies:
      return "compiled in, with " + shown(text::join(origin.local_files, ", ")) + " from " +
             shown(origin.directory.string());
    case DatabaseOrigin::Kind::compiled_in: break;
  }
  return "compiled in";
}

// A string, or null when it does not apply.
json or_null(const std::string& value) { return value.empty() ? json() : json(value); }

json origin_json(const manifest::SelectedDatabase& selected,
                 std::chrono::system_clock::time_point now) {
  const auto& origin = selected.origin;
  const auto age = manifest::age_in_days(origin.date, now);
  const auto stale = manifest::stale_database_note(origin.revision, origin.date, now);
  return {{"revision", origin.revision},
          {"date", or_null(origin.date)},
          {"age_days", age ? json(*age) : json()},
          {"stale", stale.has_value()},
          {"source", kind_name(origin.kind)},
          {"url", or_null(origin.url)},
          {"updated_at", or_null(origin.updated_at)},
          {"directory", or_null(origin.directory.string())},
          {"local_files", origin.local_files},
          {"note", or_null(origin.note)},
          {"cuda_releases", selected.db.cuda_releases.size()}};
}

void print_origin(std::ostream& out, const manifest::SelectedDatabase& selected,
                  std::chrono::system_clock::time_point now) {
  const auto& origin = selected.origin;
  const auto age = manifest::age_in_days(origin.date, now);
  out << "Revision: " << shown(origin.revision) << '\n';
  const auto days = age.value_or(0);
  out << "Date:     "
      << (origin.date.empty() ? std::string("unknown")
                              : shown(origin.date) + " (" + std::to_string(days) +
                                    (days == 1 ? " day" : " days") + " ago)")
      << '\n';
  out << "Source:   " << source_line(origin) << '\n';
  if (!origin.note.empty()) out << "Note: " << shown(origin.note) << '\n';
  if (auto stale = manifest::stale_database_note(origin.revision, origin.date, now))
    out << "Note: " << shown(*stale) << '\n';
}

Status run_db_show(const DbOptions& options, Context& context) {
  auto selected = manifest::load_selected_database(paths::data_root(context.env));
  if (!selected) return selected.error();
  const auto now = std::chrono::system_clock::now();
  if (options.json)
    context.out << origin_json(*selected, now).dump(2, ' ', true, json::error_handler_t::replace)
                << '\n';
  else
    print_origin(context.out, *selected, now);
  return Ok{};
}

// The revision updates compare against: the database in use, or the compiled-in one when the
// copy in the data root cannot be read (an update is how that gets repaired).
std::string revision_in_use(const std::filesystem::path& data_root, Context& context) {
  auto selected = manifest::load_selected_database(data_root);
  if (selected) return selected->origin.revision;
  context.err << "cudaenv: warning: " << shown(selected.error().message) << '\n';
  auto builtin = manifest::load_database(manifest::embedded_manifests());
  return builtin ? builtin->revision : std::string{};
}

Status run_db_update(const DbOptions& options, Context& context) {
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  const auto in_use = revision_in_use(setup->store.root, context);
  auto result =
      install::update_database({setup->mirror, setup->store.root, in_use, setup->settings.fetch});
  if (!result) return result.error();
  if (!result->installed) {
    context.out << "the compatibility database is up to date: " << shown(result->url)
                << " offers revision " << shown(result->index.revision) << ", the one in use is "
                << shown(in_use) << "; nothing changed\n";
    return Ok{};
  }
  context.out << "updated the compatibility database from revision " << shown(in_use) << " to "
              << shown(result->index.revision) << " (dated " << shown(result->index.date)
              << ") from " << shown(result->url) << '\n';
  if (!result->kept_local_copies.empty())
    context.out << "the files placed there by hand before were moved to "
                << shown(result->kept_local_copies.string()) << '\n';
  return Ok{};
}

}  // namespace

void add_db_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<DbOptions>();
  auto* db = app.add_subcommand("db", "Show the compatibility database in use, or update it");
  db->add_flag("--json", options->json, "Print it as JSON");
  auto* update = db->add_subcommand("update", "Fetch a newer database published beside the mirror");
  add_download_flags(*update, options->download);
  update->callback([options, &context, &outcome] {
    outcome.status = install::run_interruptible("the database update",
                                                [&] { return run_db_update(*options, context); });
  });
  db->callback([options, update, &context, &outcome] {
    if (update->parsed()) return;
    outcome.status = run_db_show(*options, context);
  });
}

}  // namespace cudaenv::cli
