// `cudaenv compat install X.Y [--repo URL] [--gpu MODEL]...`, `compat list`, `compat uninstall
// X.Y`: NVIDIA's CUDA forward-compatibility packages in the store (docs/forward-compat.md).
#include <algorithm>

#include "cli/commands.hpp"
#include "cli/download_setup.hpp"
#include "core/files.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "forward/compat_library.hpp"
#include "forward/decision.hpp"
#include "install/compat_install.hpp"
#include "manifest/load.hpp"
#include "probe/kernel_module.hpp"
#include "probe/os_release.hpp"

namespace cudaenv::cli {

namespace fs = std::filesystem;

namespace {

struct CompatOptions {
  std::string version;
  std::string repo;
  std::vector<std::string> gpus;
  DownloadFlags download;
};

Result<Version> compat_version(const std::string& text) {
  auto version = Version::parse(text);
  if (!version || version->major() < 11)
    return make_error(ErrorKind::usage,
                      "compat: \"" + text::printable(text) + "\" is not a CUDA version",
                      "name the toolkit minor, e.g. cudaenv compat install 12.8");
  return version->major_minor();
}

// Where the package comes from: --repo, CUDAENV_COMPAT_REPO, else NVIDIA's repository for this
// distribution and processor.
Result<std::string> repository(const CompatOptions& options, const Context& context) {
  std::string url = options.repo;
  std::string origin = "--repo";
  if (url.empty()) {
    if (auto value = context.env.get_nonempty("CUDAENV_COMPAT_REPO")) {
      url = *value;
      origin = "CUDAENV_COMPAT_REPO";
    }
  }
  if (url.empty()) {
    const auto os = probe::probe_os(context.sysroot);
    if (os.id.empty() || os.version_id.empty())
      return make_error(ErrorKind::usage, "compat install: this machine's distribution is unknown",
                        "name NVIDIA's repository for it: --repo https://developer.download."
                        "nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/");
    return install::default_compat_repository(os.id, os.version_id, os.architecture);
  }
  if (auto ok = untrusted::check(untrusted::Field::url, url, origin, ErrorKind::usage); !ok)
    return ok.error();
  if (url.back() != '/') url += '/';
  return url;
}

// The GPU models it may run on, as the database names them: those --gpu names (for the nodes
// of a cluster that share the store), else this machine's as the kernel names them; each a
// data-center model, or the install is refused: elsewhere the library fails with error 804.
Result<std::vector<std::string>> approved_models(const CompatOptions& options,
                                                 const manifest::Database& db,
                                                 const Context& context) {
  auto models = options.gpus.empty() ? probe::kernel_gpu_models(context.sysroot) : options.gpus;
  for (const auto& gpu : options.gpus) {
    if (auto ok = untrusted::check(untrusted::Field::gpu_model, gpu, "--gpu", ErrorKind::usage);
        !ok)
      return ok.error();
  }
  std::vector<std::string> approved;
  for (const auto& model : models) {
    const auto* known = db.model_of_device(model);
    if (known == nullptr || !known->datacenter)
      return make_error(
          ErrorKind::no_compatible_set,
          "GPU " + text::printable(model) +
              (known == nullptr ? " is not in the database's GPU models"
                                : " is not a data-center GPU") +
              ": forward compatibility runs only on NVIDIA's data-center GPUs and fails elsewhere "
              "with " +
              forward::error_804(),
          "upgrade the driver instead (cudaenv resolve names the branch)");
    if (std::find(approved.begin(), approved.end(), known->name) == approved.end())
      approved.push_back(known->name);
  }
  return approved;
}

// What the hook will do with it here, in one line.
std::string decision_here(const fs::path& lib, const std::vector<std::string>& approved,
                          const Context& context) {
  const auto library = forward::find_compat_library(lib);
  if (!library) return "no library found";
  const auto decision = forward::decide(
      *library, probe::kernel_module_driver_version(context.sysroot),
      probe::kernel_gpu_models(context.sysroot), [&](const std::string& gpu) {
        return std::any_of(approved.begin(), approved.end(),
                           [&](const auto& model) { return text::gpu_is_model(gpu, model); });
      });
  return (decision.use() ? "used here: " : "not used here: ") + decision.reason;
}

Status run_compat_install(const CompatOptions& options, Context& context) {
  auto cuda = compat_version(options.version);
  if (!cuda) return cuda.error();
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  auto selected = manifest::load_selected_database(paths::data_root(context.env));
  if (!selected) return selected.error();
  auto approved = approved_models(options, selected->db, context);
  if (!approved) return approved.error();
  auto repo = repository(options, context);
  if (!repo) return repo.error();
  auto installed =
      install::install_compat(setup->store, {*cuda, *repo, *approved, setup->settings.fetch});
  if (!installed) return installed.error();
  context.out << "installed " << installed->package.name << " "
              << text::printable(installed->package.version) << " (libcuda "
              << installed->library_version << ") in "
              << text::printable(installed->prefix.string(), text::message_limit) << '\n';
  if (approved->empty())
    context.err << "warning: no GPU is visible, so it goes first nowhere yet: name the nodes' "
                   "models with --gpu (cudaenv compat install "
                << cuda->str() << " --gpu H100)\n";
  context.out << decision_here(installed->prefix / "lib", *approved, context) << '\n';
  return Ok{};
}

Status run_compat_list(Context& context) {
  const auto root = paths::data_root(context.env) / "compat";
  std::error_code ec;
  std::vector<fs::path> prefixes;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!name.empty() && name.front() != '.' && Version::parse(name))
      prefixes.push_back(it->path());
  }
  std::sort(prefixes.begin(), prefixes.end());
  for (const auto& prefix : prefixes) {
    const auto library = forward::find_compat_library(prefix / "lib");
    std::vector<std::string> approved;
    if (auto text = read_bounded_file(prefix / "gpus", 16384))
      for (const auto& line : text::lines(*text))
        if (!text::trim(line).empty()) approved.emplace_back(text::trim(line));
    context.out << "CUDA " << prefix.filename().string() << "  libcuda "
                << (library ? library->version : std::string("(missing)")) << "  "
                << text::printable(prefix.string(), text::message_limit) << "\n  "
                << text::printable(decision_here(prefix / "lib", approved, context),
                                   text::message_limit)
                << '\n';
  }
  return Ok{};
}

Status run_compat_uninstall(const CompatOptions& options, Context& context) {
  auto cuda = compat_version(options.version);
  if (!cuda) return cuda.error();
  const auto prefix = paths::data_root(context.env) / "compat" / cuda->str();
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(prefix, ec)))
    return make_error(ErrorKind::not_found,
                      "no forward-compatibility package for CUDA " + cuda->str() + " is installed",
                      "cudaenv compat list shows what is");
  fs::remove_all(prefix, ec);
  if (ec)
    return make_error(ErrorKind::failure, "cannot remove " + prefix.string() + ": " + ec.message());
  context.out << "removed the forward-compatibility package for CUDA " << cuda->str() << '\n';
  return Ok{};
}

}  // namespace

void add_compat_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto* compat = app.add_subcommand(
      "compat", "NVIDIA's CUDA forward-compatibility packages (a newer CUDA on an older driver)");
  compat->require_subcommand(1);
  auto options = std::make_shared<CompatOptions>();
  auto* install = compat->add_subcommand(
      "install", "Install cuda-compat-X-Y from NVIDIA's apt repository (or a mirror of it)");
  install->add_option("VERSION", options->version, "The toolkit minor, e.g. 12.8")->required();
  install->add_option("--repo", options->repo,
                      "The apt repository (default: NVIDIA's for this distribution)");
  install->add_option("--gpu", options->gpus,
                      "A data-center GPU model other nodes sharing this store have (repeatable)");
  add_download_flags(*install, options->download);
  install->callback(
      [options, &context, &outcome] { outcome.status = run_compat_install(*options, context); });
  auto* list =
      compat->add_subcommand("list", "The installed packages and whether each applies here");
  list->callback([&context, &outcome] { outcome.status = run_compat_list(context); });
  auto* uninstall = compat->add_subcommand("uninstall", "Remove an installed package");
  uninstall->add_option("VERSION", options->version, "The toolkit minor, e.g. 12.8")->required();
  uninstall->callback(
      [options, &context, &outcome] { outcome.status = run_compat_uninstall(*options, context); });
}

}  // namespace cudaenv::cli
