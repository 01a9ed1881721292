// `cudaenv mirror create DIR --cuda VERSION [--cudnn VERSION] [--components ...] [--mirror
// UPSTREAM] [--with-cudaenv BUNDLE]`

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "core/text.hpp"
#include "install/bundle.hpp"
#include "install/get_script.hpp"
#include "install/mirror_create.hpp"

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
              << release->archives.size() << " archives) into " << options.directory << '\n';
  return Ok{};
}

// --with-cudaenv: the release bundle, its sha256 line and the get-cudaenv script.
Status publish_cudaenv(const MirrorOptions& options, Context& context) {
  auto published = install::publish_bundle(options.directory, options.bundle,
                                           install::embedded_get_script().front().text);
  if (!published) return published.error();
  context.out << "published cudaenv " << published->version.str() << " (" << published->file_name
              << ") into "
              << text::printable((std::filesystem::path(options.directory) / "cudaenv").string(),
                                 text::message_limit)
              << '\n';
  notes(context) << "install it on a machine with: curl -fsSL <its URL>/cudaenv/get | sh -s -- "
                    "<its URL>\n";
  return Ok{};
}

Status run_mirror_create(const MirrorOptions& options, Context& context) {
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  auto platform = install::detect_platform(context.sysroot);
  if (!platform) return platform.error();
  if (options.cuda.empty() && options.cudnn.empty() && options.bundle.empty()) {
    return make_error(ErrorKind::usage, "mirror create: nothing to mirror",
                      "name --cuda VERSION, --cudnn VERSION and/or --with-cudaenv BUNDLE");
  }
  if (!options.bundle.empty()) {
    if (auto status = publish_cudaenv(options, context); !status) return status;
  }
  if (!options.cuda.empty()) {
    if (auto status = mirror_one(options, "cuda", options.cuda, *setup, *platform, context);
        !status)
      return status;
  }
  if (!options.cudnn.empty()) {
    if (auto status = mirror_one(options, "cudnn", options.cudnn, *setup, *platform, context);
        !status)
      return status;
  }
  auto published = install::publish_database_in_use(options.directory, setup->store.root);
  if (!published) return published.error();
  context.out << "published the compatibility database (revision " << published->revision
              << ") into "
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
  add_download_flags(*create, options->download);
  create->callback(
      [options, &context, &outcome] { outcome.status = run_mirror_create(*options, context); });
}

}  // namespace cudaenv::cli
