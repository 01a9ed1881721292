// `cudaenv install [SPEC] [--cudnn SPEC] [--components minimal|full|a,b,c] [--mirror URL] [--jobs
// N] [--source redist|pypi] [--index-url URL] [--runtime-only]` Without SPEC: what the nearest
// .cudaenv pins (toolkit and cuDNN), as nvm, pyenv and mise do.

#include "cli/commands.hpp"
#include "cli/download_setup.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/interrupt.hpp"
#include "install/plan.hpp"
#include "install/pypi_plan.hpp"
#include "manifest/load.hpp"
#include "project/project_file.hpp"
#include "project/selection.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::cli {

namespace {

struct Installed {
  install::InstallOutcome outcome;
  std::uint64_t bytes = 0;
};

// What to install: the SPEC and --cudnn given, or the pins of the project file `pinned_by`.
struct InstallTarget {
  std::string cuda;
  std::string cudnn;
  std::optional<std::filesystem::path> pinned_by;
};

Result<InstallTarget> target_from_project(const InstallOptions& options, Context& context) {
  const auto here = paths::working_directory(context.env);
  const auto file = project::find_project_file(here);
  if (!file) {
    return make_error(
        ErrorKind::usage,
        "no SPEC given and no .cudaenv in " + text::printable(here.string()) + " or above",
        "name a version (cudaenv install 12.4), or pin one for this project first "
        "(cudaenv use 12.4)");
  }
  auto pins = project::read_project_file(*file);
  if (!pins) return pins.error();
  if (!pins->cuda) {
    return make_error(
        ErrorKind::usage,
        "no SPEC given and " + text::printable(file->string()) + " pins no CUDA version",
        "add cuda = \"12.4\" to it (cudaenv use 12.4), or name a version");
  }
  InstallTarget target{pins->cuda->str(), options.cudnn, *file};
  if (target.cudnn.empty() && pins->cudnn) target.cudnn = pins->cudnn->str();
  return target;
}

// A SPEC or pin naming nvcc's version ("13.0.88") installs the release that ships it ("13.0.2").
void cuda_as_release(InstallTarget& target, Context& context) {
  const auto spec = VersionSpec::parse(target.cuda);
  if (!spec) return;  // the plan names the bad SPEC
  const auto db = manifest::load_default_database(paths::data_root(context.env));
  if (!db) return;  // the plan reports a database that does not load
  target.cuda = resolve::install_spec(*db, *spec);
}

Result<InstallTarget> install_target(const InstallOptions& options, Context& context) {
  auto target =
      options.spec.empty()
          ? target_from_project(options, context)
          : Result<InstallTarget>(InstallTarget{options.spec, options.cudnn, std::nullopt});
  if (target) cuda_as_release(*target, context);
  return target;
}

Result<Installed> run_plan(const install::InstallPlan& plan, const DownloadSetup& setup, bool force,
                           Context& context) {
  ProgressView progress(context, plan);
  auto settings = setup.settings;
  settings.force = force;
  auto outcome = install::run_install(plan, setup.store, settings, progress);
  progress.finish();
  if (!outcome) return setup.explain(outcome.error());
  std::uint64_t bytes = 0;
  for (const auto& archive : plan.archives) bytes += archive.file.size;
  return Installed{*outcome, bytes};
}

void report(const install::InstallPlan& plan, const Installed& done, const std::string& what,
            const DownloadSetup& setup, Context& context) {
  if (done.outcome == install::InstallOutcome::already_installed) {
    context.out << what << " " << text::printable(plan.version) << " is already installed in "
                << text::printable(plan.target.string(), text::message_limit)
                << " (--force reinstalls)\n";
    return;
  }
  context.out << "installed " << what << " " << text::printable(plan.version) << " ("
              << plan.archives.size() << " archives, " << human_bytes(done.bytes);
  // Wheels name the index they came from: one set by PIP_INDEX_URL or a config is easy to miss.
  if (setup.from_index())
    context.out << ", from " << text::printable(setup.described(), text::message_limit);
  context.out << ") in " << text::printable(plan.target.string(), text::message_limit) << '\n';
}

// A pin an installed build already satisfies needs no mirror: said so, as pyenv and mise do.
void report_pinned(const std::string& what, const install::Installed& have,
                   const InstallTarget& target, const std::string& spec, Context& context) {
  context.out << what << " " << have.version.str() << " is already installed in "
              << text::printable(have.path.string()) << " ("
              << text::printable(target.pinned_by->string()) << " pins " << text::printable(spec)
              << ")\n";
}

void warn_if_unknown(const install::ToolkitPlan& plan, Context& context) {
  if (plan.unknown_to_database) {
    context.err << "cudaenv: warning: CUDA " << text::printable(plan.install.version)
                << " is newer than the compatibility database ("
                << "revision " << text::printable(*plan.unknown_to_database)
                << "): its driver and GPU requirements are unknown\n";
  }
}

// Every decision before the first archive byte: a missing cuDNN is reported before the toolkit
// is downloaded. An empty plan is one the store already satisfies.
struct Plans {
  std::optional<install::ToolkitPlan> toolkit;
  std::optional<install::InstallPlan> cudnn;
};

// From a package index: the same plan, with what the index cannot bring said on stderr.
Result<install::ToolkitPlan> plan_from_index(const InstallTarget& target,
                                             const InstallOptions& options,
                                             const DownloadSetup& setup,
                                             const std::string& platform, Context& context) {
  auto plan = install::plan_pypi_toolkit({target.cuda, options.components, options.runtime_only},
                                         setup.index(), platform);
  if (!plan) return plan.error();
  note_database_pins(*plan, setup, context);
  if (!plan->without_wheels.empty()) {
    context.err << "cudaenv: note: skipped, no wheel on the index for CUDA "
                << text::printable(plan->install.version) << ": "
                << text::printable(text::join(plan->without_wheels, ", "), text::message_limit)
                << " (--source redist installs them)\n";
  }
  if (!plan->other_platforms_only.empty()) {
    context.err << "cudaenv: note: left out, their wheels are for other platforms than "
                << text::printable(platform) << ": "
                << text::printable(text::join(plan->other_platforms_only, ", "),
                                   text::message_limit)
                << "\n";
  }
  if (plan->runtime_only) {
    context.err << "cudaenv: note: CUDA " << text::printable(plan->install.version)
                << " from the index is runtime-only: its wheels carry no nvcc, so the prefix "
                   "cannot compile CUDA code\n";
  }
  return install::ToolkitPlan{std::move(plan->install), std::nullopt};
}

Result<install::ToolkitPlan> plan_toolkit(const InstallTarget& target,
                                          const InstallOptions& options, const DownloadSetup& setup,
                                          const std::string& platform, Context& context) {
  if (setup.from_index()) return plan_from_index(target, options, setup, platform, context);
  return install::plan_toolkit({target.cuda, options.components}, setup.source(), platform);
}

Result<install::InstallPlan> plan_cudnn(const InstallTarget& target, int major,
                                        const DownloadSetup& setup, const std::string& platform) {
  if (setup.from_index())
    return install::plan_pypi_cudnn(target.cudnn, major, setup.index(), platform);
  return install::plan_cudnn(target.cudnn, major, setup.source(), platform);
}

Result<Plans> make_plans(const InstallTarget& target, const InstallOptions& options,
                         const DownloadSetup& setup, const std::string& platform,
                         Context& context) {
  Plans plans;
  const bool satisfy_pin = target.pinned_by && !options.force;
  project::Selection pinned;
  pinned.cuda = VersionSpec::parse(target.cuda).value();
  const auto have = satisfy_pin ? project::installed_match(pinned, setup.store) : std::nullopt;
  int major = 0;
  if (have) {
    report_pinned("CUDA", *have, target, target.cuda, context);
    major = have->version.major();
  } else {
    auto toolkit = plan_toolkit(target, options, setup, platform, context);
    if (!toolkit) return setup.explain(toolkit.error());
    major = Version::parse(toolkit->install.version)->major();
    plans.toolkit = std::move(*toolkit);
  }
  if (target.cudnn.empty()) return plans;
  if (satisfy_pin) {
    const auto spec = VersionSpec::parse(target.cudnn);
    if (auto built = project::installed_cudnn_match(*spec, major, setup.store)) {
      report_pinned("cuDNN", *built, target, target.cudnn, context);
      return plans;
    }
  }
  auto cudnn = plan_cudnn(target, major, setup, platform);
  if (!cudnn) return setup.explain(cudnn.error());
  plans.cudnn = std::move(*cudnn);
  return plans;
}

Status run_plans(const Plans& plans, const InstallOptions& options, const DownloadSetup& setup,
                 Context& context) {
  if (plans.toolkit) {
    warn_if_unknown(*plans.toolkit, context);
    auto done = run_plan(plans.toolkit->install, setup, options.force, context);
    if (!done) return done.error();
    report(plans.toolkit->install, *done, "CUDA", setup, context);
    refresh_shims(context);
  }
  if (plans.cudnn) {
    auto done = run_plan(*plans.cudnn, setup, options.force, context);
    if (!done) return done.error();
    report(*plans.cudnn, *done, "cuDNN", setup, context);
    refresh_modules(context);
  }
  return Ok{};
}

Status install_command(const InstallOptions& options, Context& context) {
  auto target = install_target(options, context);
  if (!target) return target.error();
  // Mistyped specs are reported before anything is downloaded, not after.
  const auto cuda_flag = target->pinned_by ? target->pinned_by->string() + ": cuda" : "SPEC";
  if (auto spec = install::parse_spec_flag(target->cuda, cuda_flag); !spec) return spec.error();
  if (!target->cudnn.empty()) {
    if (auto spec = install::parse_spec_flag(target->cudnn, "--cudnn"); !spec) return spec.error();
  }
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  if (options.runtime_only && !setup->from_index()) {
    return make_error(ErrorKind::usage, "--runtime-only applies to --source pypi only",
                      "NVIDIA's redist archives always bring nvcc: drop --runtime-only");
  }
  for (const auto* product : {"cuda", "cudnn"}) {
    if (std::string_view(product) == "cudnn" && target->cudnn.empty()) continue;
    if (auto writable = install::prepare_store(setup->store, product); !writable)
      return writable.error();
  }
  auto platform = install::detect_platform(context.sysroot);
  if (!platform) return platform.error();
  auto plans = make_plans(*target, options, *setup, *platform, context);
  if (!plans) return plans.error();
  return run_plans(*plans, options, *setup, context);
}

}  // namespace

// SIGINT, SIGTERM and SIGHUP end it the same way at any step, a wait on another install's lock
// included (install/interrupt.hpp); `use` installs through here too.
Status run_install_command(const InstallOptions& options, Context& context) {
  return install::run_interruptible("the install",
                                    [&] { return install_command(options, context); });
}

void add_install_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<InstallOptions>();
  auto* command = app.add_subcommand(
      "install", "Install a CUDA toolkit (and cuDNN) side by side; no SPEC: what .cudaenv pins");
  command->add_option("SPEC", options->spec,
                      "Version spec: 12, 12.4, 12.4.1, latest (default: the nearest .cudaenv)");
  command->add_option("--cudnn", options->cudnn,
                      "Also install cuDNN matching this spec, built for the toolkit's CUDA major");
  command->add_option("--components", options->components,
                      "minimal, full (default) or a comma-separated list");
  command->add_flag("--force", options->force, "Reinstall even if already installed");
  command->add_flag("--runtime-only", options->runtime_only,
                    "With --source pypi: accept a CUDA 11/12 prefix without nvcc (NVIDIA's "
                    "cu11/cu12 wheels carry none)");
  add_download_flags(*command, options->download);
  add_source_flags(*command, options->download);
  command->callback(
      [options, &context, &outcome] { outcome.status = run_install_command(*options, context); });
}

}  // namespace cudaenv::cli
