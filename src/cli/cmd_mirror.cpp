// `cudaenv mirror create DIR --cuda VERSION [--cudnn VERSION] [--components ...] [--mirror
// UPSTREAM | --source pypi [--index-url URL]] [--with-cudaenv BUNDLE]`

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "core/text.hpp"
#include "install/bundle.hpp"
#include "install/get_script.hpp"
#include "install/interrupt.hpp"
#include "install/mirror_create.hpp"
#include "install/pypi_plan.hpp"
#include "install/wheel_mirror.hpp"

namespace cudaenv::cli {

namespace {

Status mirror_one(const MirrorOptions& options, const std::string& product, const std::string& spec,
                  const DownloadSetup& setup, const std::string& platform, Context& context) {
  auto release =
      install::plan_mirror_release({product, spec, options.components}, setup.source(), platform);
  if (!release) return release.error();
  install::InstallPlan shown{product, release->version.str(), platform, "", setup.mirror,
                             {},      release->archives};
  ProgressView progress(context, shown);
  auto status = install::create_mirror_release(options.directory, setup.mirror, *release,
                                               setup.settings, progress);
  progress.finish();
  if (!status) return status;
  context.out << "mirrored " << product << " " << release->version.str() << " ("
              << release->archives.size() << " archives) into "
              << text::printable(options.directory, text::message_limit) << '\n';
  return Ok{};
}

// cuDNN from an index: the release `spec` picks for CUDA 13, and the same release for CUDA 12
// where the index has it (each becomes a cuda<major> variant of the mirrored release).
Result<std::vector<install::InstallPlan>> cudnn_from_index(const std::string& spec,
                                                           const DownloadSetup& setup,
                                                           const std::string& platform) {
  std::vector<install::InstallPlan> plans;
  std::string exact = spec;
  std::optional<Error> first_error;
  for (const int major : {13, 12}) {
    auto plan = install::plan_pypi_cudnn(exact, major, setup.index(), platform);
    if (!plan) {
      if (plan.error().kind != ErrorKind::not_found) return plan.error();
      if (!first_error) first_error = plan.error();
      continue;
    }
    exact = plan->archives.front().version;
    plans.push_back(std::move(*plan));
  }
  if (plans.empty()) return *first_error;
  return plans;
}

// `--source pypi`: the release's wheels repacked into NVIDIA's layout.
Status mirror_from_index(const MirrorOptions& options, const std::string& product,
                         const std::string& spec, const DownloadSetup& setup,
                         const std::string& platform, Context& context) {
  std::vector<install::InstallPlan> plans;
  if (product == "cuda") {
    auto plan =
        install::plan_pypi_toolkit({spec, options.components, true}, setup.index(), platform);
    if (!plan) return setup.explain(plan.error());
    note_database_pins(*plan, setup, context);
    if (plan->runtime_only) {
      context.err << "cudaenv: note: CUDA " << text::printable(plan->install.version)
                  << " from the index has no nvcc: toolkits installed from this mirror are "
                     "runtime-only\n";
    }
    plans.push_back(std::move(plan->install));
  } else {
    auto cudnn = cudnn_from_index(spec, setup, platform);
    if (!cudnn) return setup.explain(cudnn.error());
    plans = std::move(*cudnn);
  }
  install::InstallPlan shown = plans.front();
  for (size_t i = 1; i < plans.size(); ++i)
    shown.archives.insert(shown.archives.end(), plans[i].archives.begin(), plans[i].archives.end());
  ProgressView progress(context, shown);
  auto status =
      install::mirror_from_wheels(options.directory, plans, setup.store, setup.settings, progress);
  progress.finish();
  if (!status) return setup.explain(status.error());
  context.out << "mirrored " << product << " " << text::printable(shown.version) << " ("
              << shown.archives.size() << " wheels from "
              << text::printable(setup.described(), text::message_limit) << ", repacked) into "
              << text::printable(options.directory, text::message_limit) << '\n';
  return Ok{};
}

// --with-cudaenv: the release bundle, its sha256 line and the get-cudaenv script.
Status publish_cudaenv(const MirrorOptions& options, Context& context) {
  std::string url;
  if (!options.public_url.empty()) {
    auto checked = install::checked_public_url(options.public_url);
    if (!checked) return checked.error();
    url = *checked;
  }
  auto published = install::publish_bundle(options.directory, options.bundle,
                                           install::embedded_get_script().front().text, url);
  if (!published) return published.error();
  context.out << "published cudaenv " << published->version.str() << " ("
              << text::printable(published->file_name) << ") into "
              << text::printable((std::filesystem::path(options.directory) / "cudaenv").string(),
                                 text::message_limit)
              << '\n';
  if (url.empty())
    notes(context) << "install it on a machine with: curl -fsSL <its URL>/cudaenv/get | sh -s -- "
                      "<its URL> (or make the mirror with --url URL: then | sh alone)\n";
  else
    notes(context) << "install it on a machine with: curl -fsSL "
                   << text::printable(url, text::message_limit) << "/cudaenv/get | sh\n";
  return Ok{};
}

Status run_mirror_create(const MirrorOptions& options, Context& context) {
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  auto platform = install::detect_platform(context.sysroot);
  if (!platform) return platform.error();
  if (!options.public_url.empty() && options.bundle.empty())
    return make_error(ErrorKind::usage, "--url: only the get script of --with-cudaenv uses it",
                      "add --with-cudaenv BUNDLE, or leave --url out");
  if (options.cuda.empty() && options.cudnn.empty() && options.bundle.empty()) {
    return make_error(ErrorKind::usage, "mirror create: nothing to mirror",
                      "name --cuda VERSION, --cudnn VERSION and/or --with-cudaenv BUNDLE");
  }
  if (!options.bundle.empty()) {
    if (auto status = publish_cudaenv(options, context); !status) return status;
  }
  if (!options.cuda.empty()) {
    auto status = setup->from_index()
                      ? mirror_from_index(options, "cuda", options.cuda, *setup, *platform, context)
                      : mirror_one(options, "cuda", options.cuda, *setup, *platform, context);
    if (!status) return status;
  }
  if (!options.cudnn.empty()) {
    auto status =
        setup->from_index()
            ? mirror_from_index(options, "cudnn", options.cudnn, *setup, *platform, context)
            : mirror_one(options, "cudnn", options.cudnn, *setup, *platform, context);
    if (!status) return status;
  }
  auto published = install::publish_database_in_use(options.directory, setup->store.root);
  if (!published) return published.error();
  context.out << "published the compatibility database (revision "
              << text::printable(published->revision) << ") into "
              << text::printable(
                     (std::filesystem::path(options.directory) / "cudaenv" / "db").string(),
                     text::message_limit)
              << '\n';
  notes(context)
      << "serve it with any web server and install with: cudaenv install VERSION --mirror "
         "<its URL>\n";
  return Ok{};
}

}  // namespace

void add_mirror_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<MirrorOptions>();
  auto* mirror =
      app.add_subcommand("mirror", "Build a mirror for machines without internet access");
  mirror->require_subcommand(1);
  auto* create = mirror->add_subcommand("create", "Download releases into DIR in NVIDIA's layout");
  create
      ->add_option("DIR", options->directory,
                   "Directory to fill (a web server serves it as the mirror)")
      ->required();
  create->add_option("--cuda", options->cuda, "CUDA release to mirror (a version spec)");
  create->add_option("--cudnn", options->cudnn, "cuDNN release to mirror (a version spec)");
  create->add_option("--components", options->components,
                     "minimal, full (default) or a comma-separated list");
  create->add_option("--with-cudaenv", options->bundle,
                     "Also serve this cudaenv release bundle (scripts/package) and get-cudaenv");
  create->add_option("--url", options->public_url,
                     "The URL the mirror will be served at, written into its cudaenv/get so that "
                     "curl -fsSL URL/cudaenv/get | sh needs no argument");
  add_download_flags(*create, options->download);
  add_source_flags(*create, options->download);
  create->callback([options, &context, &outcome] {
    outcome.status = install::run_interruptible(
        "mirror create", [&] { return run_mirror_create(*options, context); });
  });
}

}  // namespace cudaenv::cli
