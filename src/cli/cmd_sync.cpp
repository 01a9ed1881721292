// `cudaenv sync [--frozen]`: installs exactly what .cudaenv.lock names and the mirror vouches for.
// The lock's fields passed their grammars when it was read; before anything is fetched, its
// archives must be exactly those the mirror's manifest of the locked release names (a lock that
// files one release's archives as another, or cudart's archive as nvcc, fails with exit 6). Every
// archive is then checked against the sha256 in the lock as it arrives, so a mirror that replaced
// a file (and its manifest with it) fails with exit 6 too. Every archive of the toolkit and of
// cuDNN is checked before either is placed, so either failure installs nothing at all. The
// locked frameworks then go into the project's Python environment (cli/sync_frameworks.hpp).

#include "cli/cmd_lock.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/sync_frameworks.hpp"
#include "core/text.hpp"
#include "install/components.hpp"
#include "install/interrupt.hpp"
#include "install/prefetch.hpp"
#include "install/remote.hpp"
#include "lock/lock_compare.hpp"
#include "lock/lock_resolve.hpp"
#include "lock/lock_vouch.hpp"

namespace cudaenv::cli {

namespace {

std::vector<install::SelectedArchive> selected(const std::vector<lock::LockedArchive>& archives) {
  std::vector<install::SelectedArchive> out;
  for (const auto& a : archives)
    out.push_back({a.name, a.version, manifest::RedistFile{a.relative_path, a.sha256, a.size}});
  return out;
}

// What the lock's source offers, checked against the lock before anything is fetched; for an index
// also where each wheel is fetched from (its URL on the index, never one the lock names).
struct Offers {
  lock::Offer toolkit;
  std::optional<lock::Offer> cudnn;
};

// The lock's archives with the URL the offer gives each (an index's; none from a mirror, whose
// layout names them).
std::vector<install::SelectedArchive> fetched_from(const std::vector<lock::LockedArchive>& locked,
                                                   const lock::Offer& offer) {
  auto out = selected(locked);
  for (auto& archive : out) {
    for (const auto& offered : offer.archives) {
      if (offered.component == archive.component) archive.url = offered.url;
    }
  }
  return out;
}

// The installer's plans for the lock: the mirror's layout (or the index's URLs), the lock's
// digests.
std::vector<install::InstallPlan> plans_for(const lock::LockFile& lock, const Offers& offers,
                                            const DownloadSetup& setup) {
  const bool index = lock.source == lock::pypi_source;
  const auto base = index ? setup.index_url : setup.mirror;
  const auto source = index ? std::string("pypi") : std::string("redist");
  std::vector<install::InstallPlan> plans;
  plans.push_back({"cuda", lock.toolkit.version, lock::lock_platform, "", base,
                   setup.store.toolkits() / lock.toolkit.version,
                   fetched_from(lock.toolkit.components, offers.toolkit), source});
  if (lock.cudnn && offers.cudnn) {
    const auto& cudnn = *lock.cudnn;
    plans.push_back({"cudnn", cudnn.version, lock::lock_platform, cudnn.cuda_variant, base,
                     setup.store.cudnn() / (cudnn.version + "-" + cudnn.cuda_variant),
                     fetched_from(cudnn.components, *offers.cudnn), source});
  }
  return plans;
}

// The wheels the index lists for the locked releases.
Result<lock::Offer> index_toolkit_offer(const lock::LockFile& lock, const DownloadSetup& setup) {
  const auto index = setup.index();
  auto plan = lock::index_toolkit(lock.toolkit.version, index);
  if (!plan) return setup.explain(plan.error());
  return lock::Offer{"CUDA " + lock.toolkit.version, setup.index_url,
                     std::move(plan->install.archives), "the index"};
}

Result<lock::Offer> index_cudnn_offer(const lock::LockedCudnn& cudnn, const DownloadSetup& setup) {
  const auto release = "cuDNN " + cudnn.version + " (" + cudnn.cuda_variant + ")";
  const auto major = std::stoi(cudnn.cuda_variant.substr(4));  // "cuda12": checked when read
  auto plan = install::plan_pypi_cudnn(cudnn.version, major, setup.index(), lock::lock_platform);
  if (!plan && plan.error().kind == ErrorKind::not_found)  // nothing is vouched for
    return lock::Offer{release, setup.index_url, {}, "the index"};
  if (!plan) return setup.explain(plan.error());
  return lock::Offer{release, setup.index_url, std::move(plan->archives), "the index"};
}

Result<lock::Offer> toolkit_offer(const lock::LockFile& lock, const DownloadSetup& setup) {
  if (lock.source == lock::pypi_source) return index_toolkit_offer(lock, setup);
  const auto version = *Version::parse(lock.toolkit.version);  // a release_version: it parses
  auto manifest =
      install::fetch_manifest(setup.mirror, "cuda", version, setup.store, setup.settings.fetch);
  if (!manifest) return setup.explain(manifest.error());
  auto archives = install::select_cuda_components(*manifest, "full", lock::lock_platform);
  if (!archives) return archives.error();
  return lock::Offer{"CUDA " + version.str(), install::manifest_url(setup.mirror, "cuda", version),
                     std::move(*archives)};
}

Result<lock::Offer> cudnn_offer(const lock::LockFile& lock, const DownloadSetup& setup) {
  const auto& cudnn = *lock.cudnn;
  if (lock.source == lock::pypi_source) return index_cudnn_offer(cudnn, setup);
  const auto version = *Version::parse(cudnn.version);
  const auto release = "cuDNN " + version.str() + " (" + cudnn.cuda_variant + ")";
  const auto url = install::manifest_url(setup.mirror, "cudnn", version);
  auto manifest =
      install::fetch_manifest(setup.mirror, "cudnn", version, setup.store, setup.settings.fetch);
  if (!manifest) return setup.explain(manifest.error());
  auto archives =
      install::select_cudnn_components(*manifest, lock::lock_platform, cudnn.cuda_variant);
  if (!archives) return lock::Offer{release, url, {}};  // no such build: nothing is vouched for
  return lock::Offer{release, url, std::move(*archives)};
}

// The lock's archives against the mirror's manifests (or the index's pages) of its releases,
// before anything is fetched.
Result<Offers> vouched_by_mirror(const lock::LockFile& lock, const DownloadSetup& setup,
                                 const std::string& lock_path) {
  auto toolkit = toolkit_offer(lock, setup);
  if (!toolkit) return toolkit.error();
  if (auto ok = lock::check_archives(lock.toolkit.components, *toolkit, "toolkit", lock_path); !ok)
    return ok.error();
  Offers offers{std::move(*toolkit), std::nullopt};
  if (!lock.cudnn) return offers;
  auto cudnn = cudnn_offer(lock, setup);
  if (!cudnn) return cudnn.error();
  if (auto ok = lock::check_archives(lock.cudnn->components, *cudnn, "cudnn", lock_path); !ok)
    return ok.error();
  offers.cudnn = std::move(*cudnn);
  return offers;
}

// What `sync` goes on with: the lock, and what its source vouched for.
struct VouchedLock {
  lock::LockFile lock;
  Offers offers;
};

// --frozen: the lock on disk, only when it is what `lock --check` calls current (.cudaenv, the
// database and the mirror all agree with it).
Result<lock::LockFile> frozen_lock(const LockProject& project, lock::LockFile stored,
                                   const DownloadSetup& setup, Context& context) {
  auto found = stale_lock_differences(project, stored, setup, context);
  if (!found) return found.error();
  if (found->empty()) return stored;
  for (const auto& line : *found)
    context.out << "  " << text::printable(line, text::message_limit) << '\n';
  return make_error(ErrorKind::failure,
                    "--frozen: the lock is stale: " +
                        text::printable(project.lock_path().string(), text::message_limit) +
                        " differs from .cudaenv, the database or the mirror in " +
                        std::to_string(found->size()) + " place" + (found->size() == 1 ? "" : "s") +
                        " (listed above); nothing was installed",
                    "run cudaenv lock, and commit .cudaenv.lock");
}

// Where the stored lock and .cudaenv part, as `sync` (without --frozen) rewrites the lock for:
// the pins and targets, and a --source other than the lock's.
std::vector<std::string> sync_differences(const LockProject& project, const lock::LockFile& stored,
                                          const DownloadSetup& setup) {
  auto found =
      lock::project_differences(stored, lock::request_of(project.pins), project.pins.targets);
  if (setup.source_kind != stored.source)
    found.push_back("source: the lock's files are from " + stored.source + ", --source asks " +
                    setup.source_kind);
  return found;
}

// The lock to install from: the one on disk when it says what .cudaenv asks; else, unless
// --frozen, a new one. Read from the lock's own source unless --source asks otherwise.
Result<VouchedLock> lock_to_sync(const LockProject& project, const SyncOptions& options,
                                 const DownloadSetup& chosen, Context& context) {
  const auto path = project.lock_path();
  const auto shown = text::printable(path.string(), text::message_limit);
  auto stored = lock::read_lock_file(path);
  if (!stored && stored.error().kind != ErrorKind::not_found) return stored.error();
  if (!stored && options.frozen)
    return make_error(ErrorKind::failure, "--frozen: " + shown + " does not exist",
                      "run cudaenv lock, and commit .cudaenv.lock");
  const auto setup = stored ? following_lock(chosen, *stored) : chosen;
  const auto vouched = [&](Result<lock::LockFile> lock) -> Result<VouchedLock> {
    if (!lock) return lock.error();
    auto offers = vouched_by_mirror(*lock, setup, path.string());
    if (!offers) return offers.error();
    return VouchedLock{std::move(*lock), std::move(*offers)};
  };
  if (!stored) return vouched(write_project_lock(project, setup, context));
  // Integrity before staleness: a lock the mirror does not vouch for is exit 6, frozen or not.
  if (options.frozen) {
    auto offers = vouched_by_mirror(*stored, setup, path.string());
    if (!offers) return offers.error();
    auto current = frozen_lock(project, std::move(*stored), setup, context);
    if (!current) return current.error();
    return VouchedLock{std::move(*current), std::move(*offers)};
  }
  const auto found = sync_differences(project, *stored, setup);
  if (found.empty()) return vouched(std::move(*stored));
  for (const auto& line : found)
    context.out << "  " << text::printable(line, text::message_limit) << '\n';
  return vouched(write_project_lock(project, setup, context));
}

// Every archive of every plan, downloaded and checked against the lock before any prefix is
// placed: a cuDNN archive the mirror replaced must not leave the toolkit installed without it.
Status fetch_all(const std::vector<install::InstallPlan>& plans, const DownloadSetup& setup,
                 Context& context) {
  auto all = plans.front();  // for the progress view: every archive about to be fetched
  all.archives = install::archives_to_fetch(plans);
  if (all.archives.empty()) return Ok{};
  ProgressView progress(context, all);
  auto fetched = install::fetch_and_check(plans, setup.store, setup.settings, progress);
  progress.finish();
  if (fetched) return Ok{};
  if (fetched.error().kind != ErrorKind::integrity) return setup.explain(fetched.error());
  return make_error(ErrorKind::integrity, fetched.error().message + "; nothing was installed",
                    "the mirror serves another file than .cudaenv.lock pinned: ask the mirror's "
                    "owner, or if the change is intended, run cudaenv lock and commit "
                    ".cudaenv.lock");
}

Status install_plan(const install::InstallPlan& plan, const DownloadSetup& setup,
                    Context& context) {
  ProgressView progress(context, plan);
  auto outcome = install::run_install(plan, setup.store, setup.settings, progress);
  progress.finish();
  if (!outcome) return setup.explain(outcome.error());
  const auto* what = plan.product == "cuda" ? "CUDA" : "cuDNN";
  if (*outcome == install::InstallOutcome::already_installed) {
    context.out << what << " " << text::printable(plan.version) << " is already installed in "
                << text::printable(plan.target.string(), text::message_limit) << '\n';
  } else {
    context.out << "installed " << what << " " << text::printable(plan.version) << " ("
                << plan.archives.size() << (plan.source == "pypi" ? " wheels" : " archives")
                << ", each matching the lock) in "
                << text::printable(plan.target.string(), text::message_limit) << '\n';
  }
  return Ok{};
}

}  // namespace

Status run_sync(const SyncOptions& options, Context& context) {
  auto project = find_lock_project(context);
  if (!project) return project.error();
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  auto vouched = lock_to_sync(*project, options, *setup, context);
  if (!vouched) return vouched.error();
  const auto* lock = &vouched->lock;
  // The Python environment is asked first: --frozen refuses one with another framework version
  // before anything is downloaded.
  auto frameworks = survey_frameworks(*project, *lock, options.frozen, context);
  if (!frameworks) return frameworks.error();
  const auto plans = plans_for(*lock, vouched->offers, *setup);
  for (const auto& plan : plans) {
    if (auto writable = install::prepare_store(setup->store, plan.product); !writable)
      return writable.error();
  }
  if (auto checked = fetch_all(plans, *setup, context); !checked) return checked.error();
  for (const auto& plan : plans) {
    if (auto done = install_plan(plan, *setup, context); !done) return done.error();
    if (plan.product == "cuda") refresh_shims(context);
  }
  return sync_frameworks(*frameworks, *lock, framework_indexes(*setup, context), *setup, context);
}

void add_sync_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<SyncOptions>();
  auto* command = app.add_subcommand(
      "sync", "Install exactly what .cudaenv.lock names, each archive checked against the lock");
  add_source_flags(*command, options->download);
  command->add_flag("--frozen", options->frozen,
                    "Never rewrite the lock: fail when it is missing or stale");
  add_download_flags(*command, options->download);
  command->callback([options, &context, &outcome] {
    outcome.status =
        install::run_interruptible("the sync", [&] { return run_sync(*options, context); });
  });
}

}  // namespace cudaenv::cli
