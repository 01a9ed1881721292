// `cudaenv install SPEC [--cudnn SPEC] [--components minimal|full|a,b,c] [--mirror URL] [--jobs N]`

#include "cli/commands.hpp"
#include "cli/download_setup.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "install/plan.hpp"

namespace cudaenv::cli {

namespace {

struct Installed {
  install::InstallOutcome outcome;
  std::uint64_t bytes = 0;
};

Result<Installed> run_plan(const install::InstallPlan& plan, const DownloadSetup& setup, bool force,
                           Context& context) {
  ProgressView progress(context, plan);
  auto settings = setup.settings;
  settings.force = force;
  auto outcome = install::run_install(plan, setup.store, settings, progress);
  progress.finish();
  if (!outcome) return outcome.error();
  std::uint64_t bytes = 0;
  for (const auto& archive : plan.archives) bytes += archive.file.size;
  return Installed{*outcome, bytes};
}

void report(const install::InstallPlan& plan, const Installed& done, const std::string& what,
            Context& context) {
  if (done.outcome == install::InstallOutcome::already_installed) {
    context.out << what << " " << plan.version << " is already installed in "
                << plan.target.string() << " (--force reinstalls)\n";
    return;
  }
  context.out << "installed " << what << " " << plan.version << " (" << plan.archives.size()
              << " archives, " << human_bytes(done.bytes) << ") in " << plan.target.string()
              << '\n';
}

void warn_if_unknown(const install::ToolkitPlan& plan, Context& context) {
  if (plan.unknown_to_database) {
    context.err << "cudaenv: warning: CUDA " << plan.install.version
                << " is newer than the compatibility database ("
                << "revision " << *plan.unknown_to_database
                << "): its driver and GPU requirements are unknown\n";
  }
}

}  // namespace

Status run_install_command(const InstallOptions& options, Context& context) {
  // A mistyped --cudnn is reported before the toolkit is downloaded, not after.
  if (!options.cudnn.empty()) {
    if (auto spec = install::parse_spec_flag(options.cudnn, "--cudnn"); !spec) return spec.error();
  }
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  auto platform = install::detect_platform(context.sysroot);
  if (!platform) return platform.error();
  auto toolkit =
      install::plan_toolkit({options.spec, options.components}, setup->source(), *platform);
  if (!toolkit) return toolkit.error();
  warn_if_unknown(*toolkit, context);
  const auto& plan = toolkit->install;
  auto done = run_plan(plan, *setup, options.force, context);
  if (!done) return done.error();
  report(plan, *done, "CUDA", context);
  refresh_shims(context);
  if (options.cudnn.empty()) return Ok{};
  auto cudnn = install::plan_cudnn(options.cudnn, Version::parse(plan.version)->major(),
                                   setup->source(), *platform);
  if (!cudnn) return cudnn.error();
  auto cudnn_done = run_plan(*cudnn, *setup, options.force, context);
  if (!cudnn_done) return cudnn_done.error();
  report(*cudnn, *cudnn_done, "cuDNN", context);
  return Ok{};
}

void add_install_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<InstallOptions>();
  auto* command = app.add_subcommand("install", "Install a CUDA toolkit (and cuDNN) side by side");
  command->add_option("SPEC", options->spec, "Version spec: 12, 12.4, 12.4.1, latest")->required();
  command->add_option("--cudnn", options->cudnn,
                      "Also install cuDNN matching this spec, built for the toolkit's CUDA major");
  command->add_option("--components", options->components,
                      "minimal, full (default) or a comma-separated list");
  command->add_flag("--force", options->force, "Reinstall even if already installed");
  add_download_flags(*command, options->download);
  command->callback(
      [options, &context, &outcome] { outcome.status = run_install_command(*options, context); });
}

}  // namespace cudaenv::cli
