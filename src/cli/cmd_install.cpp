// `cudaenv install SPEC [--cudnn SPEC] [--components minimal|full|a,b,c] [--mirror URL] [--jobs N]`

#include "cli/commands.hpp"
#include "cli/download_setup.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "install/remote.hpp"
#include "manifest/load.hpp"

namespace cudaenv::cli {

namespace {

struct Installed {
  install::InstallOutcome outcome;
  std::uint64_t bytes = 0;
};

Result<Installed> run_plan(const install::InstallPlan& plan, const DownloadSetup& setup, bool force,
                           Context& context) {
  ProgressView progress(context.err, progress_wanted(context.env), plan);
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

void warn_if_unknown(const Version& version, Context& context) {
  auto db = manifest::load_default_database(paths::data_root(context.env));
  if (!db) return;
  const bool known = std::any_of(db->cuda_releases.begin(), db->cuda_releases.end(),
                                 [&](const auto& r) { return r.version == version; });
  if (!known) {
    context.err << "cudaenv: warning: CUDA " << version.str()
                << " is newer than the compatibility database ("
                << "revision " << db->revision
                << "): its driver and GPU requirements are unknown\n";
  }
}

Result<install::InstallPlan> plan_toolkit(const InstallOptions& options, const DownloadSetup& setup,
                                          const std::string& platform, Context& context) {
  auto spec = VersionSpec::parse(options.spec);
  if (!spec)
    return make_error(ErrorKind::usage, "SPEC: " + spec.error().message, spec.error().hint);
  auto version = choose_release(setup, "cuda", *spec);
  if (!version) return version.error();
  auto manifest =
      install::fetch_manifest(setup.mirror, "cuda", *version, setup.store, setup.settings.fetch);
  if (!manifest) return manifest.error();
  warn_if_unknown(*version, context);
  auto archives = install::select_cuda_components(*manifest, options.components, platform);
  if (!archives) return archives.error();
  return install::InstallPlan{"cuda",
                              version->str(),
                              platform,
                              "",
                              setup.mirror,
                              setup.store.toolkits() / version->str(),
                              std::move(*archives)};
}

// The newest cuDNN release matching the spec that has a build for this toolkit's CUDA major.
Result<install::InstallPlan> plan_cudnn(const std::string& spec_text, int cuda_major,
                                        const DownloadSetup& setup, const std::string& platform) {
  auto spec = VersionSpec::parse(spec_text);
  if (!spec)
    return make_error(ErrorKind::usage, "--cudnn: " + spec.error().message, spec.error().hint);
  auto offered = install::list_remote_versions(setup.mirror, "cudnn", setup.settings.fetch);
  if (!offered) return offered.error();
  const auto variant = "cuda" + std::to_string(cuda_major);
  for (const auto& version : *offered) {
    if (!spec->matches(version)) continue;
    auto manifest =
        install::fetch_manifest(setup.mirror, "cudnn", version, setup.store, setup.settings.fetch);
    if (!manifest) return manifest.error();
    auto archives = install::select_cudnn_components(*manifest, platform, variant);
    if (!archives) continue;
    return install::InstallPlan{"cudnn",
                                version.str(),
                                platform,
                                variant,
                                setup.mirror,
                                setup.store.cudnn() / (version.str() + "-" + variant),
                                std::move(*archives)};
  }
  return make_error(ErrorKind::not_found,
                    "no cuDNN release matching \"" + spec->str() + "\" with a " + variant +
                        " build on " + setup.mirror,
                    "'cudaenv list-remote --cudnn' lists the cuDNN releases the mirror offers");
}

}  // namespace

Status run_install_command(const InstallOptions& options, Context& context) {
  // A mistyped --cudnn is reported before the toolkit is downloaded, not after.
  if (!options.cudnn.empty()) {
    if (auto spec = VersionSpec::parse(options.cudnn); !spec) {
      return make_error(ErrorKind::usage, "--cudnn: " + spec.error().message, spec.error().hint);
    }
  }
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  auto platform = install::detect_platform(context.sysroot);
  if (!platform) return platform.error();
  auto plan = plan_toolkit(options, *setup, *platform, context);
  if (!plan) return plan.error();
  auto done = run_plan(*plan, *setup, options.force, context);
  if (!done) return done.error();
  report(*plan, *done, "CUDA", context);
  refresh_shims(context);
  if (options.cudnn.empty()) return Ok{};
  auto cudnn = plan_cudnn(options.cudnn, Version::parse(plan->version)->major(), *setup, *platform);
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
