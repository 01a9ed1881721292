// `cudaenv self-update [--force] [--mirror URL]`: replaces the running release bundle with the
// newer one the mirror serves (install/bundle.hpp), sha256-checked, its programs run and found to
// be the announced version, switched in one step.

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/bundle.hpp"
#include "install/bundle_switch.hpp"
#include "install/interrupt.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace cudaenv::cli {

namespace {

struct SelfUpdateOptions {
  bool force = false;
  DownloadFlags download;
};

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// What the new bundle's programs run with while they are asked their version: a plain PATH and
// locale, nothing of cudaenv's own settings (their data root is not theirs yet), and the
// sanitizer settings of a test build, which the programs of such a build need to start.
install::ProgramEnvironment version_check_environment(const Environment& env) {
  install::ProgramEnvironment out{{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}};
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (auto value = env.get(name)) out[name] = *value;
  return out;
}

Status run_self_update(const SelfUpdateOptions& options, Context& context) {
  auto prefix = install::running_bundle_prefix(paths::running_executable());
  if (!prefix) return prefix.error();
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  const auto mirror = without_trailing_slash(setup->mirror);
  const auto latest_url = mirror + "/cudaenv/latest-linux-x86_64";
  auto text = fetch::fetch_text(latest_url, setup->settings.fetch);
  if (!text) return setup->explain(text.error());
  auto latest = install::parse_latest_bundle(*text, latest_url);
  if (!latest) return latest.error();
  const auto running = Version::parse(CUDAENV_VERSION_STRING);
  if (!options.force && running && latest->version <= *running) {
    context.out << "cudaenv " << CUDAENV_VERSION_STRING << " is up to date (the mirror offers "
                << latest->version.str() << ")\n";
    return Ok{};
  }
  const install::BundleChecks checks{setup->settings.fetch, version_check_environment(context.env),
                                     context.runner};
  if (auto installed = install::install_bundle(mirror, *latest, *prefix, checks); !installed)
    return setup->explain(installed.error());
  context.out << "updated cudaenv " << CUDAENV_VERSION_STRING << " to " << latest->version.str()
              << " in " << text::printable(prefix->string(), text::message_limit) << '\n';
  return Ok{};
}

}  // namespace

void add_self_update_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<SelfUpdateOptions>();
  auto* command = app.add_subcommand(
      "self-update", "Replace this cudaenv with the newer release bundle the mirror serves");
  command->add_flag("--force", options->force,
                    "Install the mirror's bundle even when it is not newer");
  add_download_flags(*command, options->download);
  command->callback([options, &context, &outcome] {
    outcome.status = install::run_interruptible("self-update",
                                                [&] { return run_self_update(*options, context); });
  });
}

}  // namespace cudaenv::cli
