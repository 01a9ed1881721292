// `cudaenv lock [--check]`: the one set that runs on every target .cudaenv declares, written to
// .cudaenv.lock beside it, or compared with it.

#include "cli/cmd_lock.hpp"

#include <algorithm>

#include "cli/commands.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "lock/framework_companion.hpp"
#include "lock/framework_index.hpp"
#include "lock/lock_compare.hpp"
#include "lock/lock_resolve.hpp"
#include "manifest/load.hpp"
#include "probe/driver.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace cudaenv::cli {

namespace {

const char* const declare_hint =
    "declare the machines it is for in .cudaenv: [targets.a100] with driver = \"535.104.05\" "
    "and arch = [\"8.0\"]";

// No [targets]: the one implicit target is this machine, as probe sees it; on a machine with no
// GPU, checking a lock (`stored`), the targets that lock records.
Result<std::vector<project::DeclaredTarget>> targets_for(const LockProject& project,
                                                         Context& context,
                                                         const lock::LockFile* stored = nullptr) {
  if (!project.pins.targets.empty()) return project.pins.targets;
  const auto reading = probe::probe_driver(context.sysroot, context.loader);
  const auto driver = reading.driver ? Version::parse(reading.driver->version) : std::nullopt;
  if ((!driver || reading.gpus.empty()) && stored != nullptr) {
    if (auto recorded = recorded_targets(*stored); !recorded.empty()) return recorded;
  }
  if (!driver || reading.gpus.empty())
    return make_error(ErrorKind::usage,
                      text::printable(project.file.string(), text::message_limit) +
                          " declares no [targets] and this machine has no NVIDIA GPU to lock for",
                      declare_hint);
  project::DeclaredTarget here;
  here.name = "this-machine";
  here.driver = *driver;
  here.archs = probe::distinct_architectures(reading.gpus);
  std::sort(here.archs.begin(), here.archs.end());
  return std::vector<project::DeclaredTarget>{here};
}

Result<lock::ResolvedLock> resolved_lock(const LockProject& project, const DownloadSetup& setup,
                                         const manifest::SelectedDatabase& database,
                                         Context& context, const lock::LockFile* stored = nullptr) {
  auto targets = targets_for(project, context, stored);
  if (!targets) return targets.error();
  const auto source = setup.source();
  const auto index = setup.index();
  auto resolved = lock::resolve_lock(
      {project.pins, *targets, database, source, std::string("cudaenv ") + CUDAENV_VERSION_STRING,
       project.file.string(), setup.from_index() ? &index : nullptr});
  if (!resolved) return setup.explain(resolved.error());
  return resolved;
}

}  // namespace

// Where framework wheels are looked up: PyPI's through the index install --source pypi uses;
// the per-build indexes (PyTorch's) through CUDAENV_FRAMEWORK_INDEX, else the config's
// framework_index, else their own servers.
lock::FrameworkIndexes framework_indexes(const DownloadSetup& setup, const Context& context) {
  lock::FrameworkIndexes indexes{setup.index_url, setup.index_origin, "", "", setup.settings.fetch};
  if (auto base = context.env.get_nonempty("CUDAENV_FRAMEWORK_INDEX")) {
    indexes.build_index_base = *base;
    indexes.build_index_origin = "set by CUDAENV_FRAMEWORK_INDEX";
  } else if (setup.config.framework_index && !setup.config.framework_index->empty()) {
    indexes.build_index_base = *setup.config.framework_index;
    indexes.build_index_origin =
        "set by framework_index in " + paths::config_file(context.env).string();
  }
  indexes.build_index_base = text::without_trailing_slashes(indexes.build_index_base);
  return indexes;
}

namespace {

Result<lock::LockFile> fresh_lock(const LockProject& project, const DownloadSetup& setup,
                                  Context& context) {
  auto database = manifest::load_selected_database(paths::data_root(context.env));
  if (!database) return database.error();
  auto resolved = resolved_lock(project, setup, *database, context);
  if (!resolved) return resolved.error();
  for (const auto& note : resolved->notes)
    context.err << "cudaenv: note: " << text::printable(note, text::message_limit) << '\n';
  auto frameworks = lock::lock_frameworks(resolved->frameworks, framework_indexes(setup, context));
  if (!frameworks) return frameworks.error();
  resolved->lock.frameworks = std::move(*frameworks);
  auto companions = lock::lock_companions(project.pins.companions, resolved->lock.frameworks,
                                          framework_indexes(setup, context));
  if (!companions) return companions.error();
  resolved->lock.frameworks.merge(*companions);
  return std::move(resolved->lock);
}

std::string summary(const lock::LockFile& lock) {
  // A lock file comes with a cloned repository: its values are shown escaped.
  std::string text = "CUDA " + text::printable(lock.toolkit.version) + " (" +
                     std::to_string(lock.toolkit.components.size()) +
                     (lock.source == lock::pypi_source ? " wheels)" : " archives)");
  if (lock.cudnn) text += ", cuDNN " + text::printable(lock.cudnn->version);
  for (const auto& [name, framework] : lock.frameworks)
    text += ", " + name + " " + text::printable(framework.version);
  std::vector<std::string> targets;
  for (const auto& [name, target] : lock.targets)
    targets.push_back(text::printable(name) + " (" + text::printable(target.mode) + ")");
  return text + " for " + text::join(targets, ", ");
}

Status check_lock(const LockProject& project, const DownloadSetup& chosen, Context& context) {
  const auto path = project.lock_path();
  auto stored = lock::read_lock_file(path);
  if (!stored) return make_error(ErrorKind::failure, stored.error().message, stored.error().hint);
  const auto setup = following_lock(chosen, *stored);
  auto found = stale_lock_differences(project, *stored, setup, context);
  if (!found) return found.error();
  const auto shown_path = text::printable(path.string(), text::message_limit);
  if (found->empty()) {
    context.out << shown_path << " is current: " << summary(*stored) << '\n';
    return Ok{};
  }
  for (const auto& line : *found)
    context.out << "  " << text::printable(line, text::message_limit) << '\n';
  return make_error(ErrorKind::failure,
                    "the lock is stale: " + shown_path +
                        " differs from .cudaenv, the database or "
                        "the mirror in " +
                        std::to_string(found->size()) + " place" + (found->size() == 1 ? "" : "s") +
                        " (listed above)",
                    "run cudaenv lock, and commit .cudaenv.lock");
}

}  // namespace

DownloadSetup following_lock(const DownloadSetup& setup, const lock::LockFile& stored) {
  if (setup.source_flagged) return setup;
  auto followed = setup;
  followed.source_kind = stored.source;
  return followed;
}

Status name_target_gpus(std::vector<project::DeclaredTarget>& targets,
                        const std::filesystem::path& file, Context& context) {
  const bool names_gpus = std::any_of(targets.begin(), targets.end(),
                                      [](const auto& target) { return !target.gpus.empty(); });
  if (!names_gpus) return Ok{};
  auto database = manifest::load_selected_database(paths::data_root(context.env));
  if (!database) return database.error();
  return project::name_gpu_archs(targets, database->db.gpu_model_archs(),
                                 text::printable(file.string(), text::message_limit));
}

Result<LockProject> find_lock_project(Context& context) {
  const auto here = paths::working_directory(context.env);
  const auto file = project::find_project_file(here);
  if (!file)
    return make_error(ErrorKind::usage,
                      "no .cudaenv in " + text::printable(here.string(), text::message_limit) +
                          " or above: nothing to lock",
                      "pin a version first (cudaenv use 12.4), then " + std::string(declare_hint));
  auto pins = project::read_project_file(*file);
  if (!pins) return pins.error();
  for (const auto& warning : pins->warnings)
    context.err << "cudaenv: warning: " << text::printable(warning.message, text::message_limit)
                << '\n';
  if (auto named = name_target_gpus(pins->targets, *file, context); !named) return named.error();
  return LockProject{*file, std::move(*pins)};
}

namespace {

// The project with its pins narrowed to the set `stored` locked: resolving it again re-reads what
// the lock names (its releases' archives on the mirror, its targets' driver modes) without
// choosing anew, so a release the mirror gained since is no reason for a new choice.
LockProject narrowed_to(const LockProject& project, const lock::LockFile& stored) {
  auto narrowed = project;
  if (auto toolkit = VersionSpec::parse(stored.toolkit.version)) narrowed.pins.cuda = *toolkit;
  if (stored.cudnn)
    if (auto cudnn = VersionSpec::parse(stored.cudnn->version)) narrowed.pins.cudnn = *cudnn;
  return narrowed;
}

}  // namespace

Result<std::vector<std::string>> stale_lock_differences(const LockProject& project,
                                                        const lock::LockFile& stored,
                                                        const DownloadSetup& setup,
                                                        Context& context) {
  // Stale only when (docs/lockfile.md) .cudaenv asks otherwise, what the lock names changed or
  // vanished, or the database changed and resolves the request to another set. A lock .cudaenv
  // still asks for, under the database it was resolved with, is re-read as it stands (a mirror
  // that gained releases changes nothing); otherwise the request is resolved afresh, as
  // `cudaenv lock` would.
  auto database = manifest::load_selected_database(paths::data_root(context.env));
  if (!database) return database.error();
  const bool reread =
      lock::database_digest(*database) == stored.database_sha256 &&
      lock::project_differences(stored, lock::request_of(project.pins), project.pins.targets)
          .empty();
  // No framework index is asked: the locked wheels stand while they satisfy .cudaenv.
  auto resolved = resolved_lock(reread ? narrowed_to(project, stored) : project, setup, *database,
                                context, &stored);
  if (!resolved) {
    const auto kind = resolved.error().kind;
    if (!reread || (kind != ErrorKind::not_found && kind != ErrorKind::no_compatible_set))
      return resolved.error();
    // The locked set itself can no longer be had: the mirror dropped its release.
    return std::vector<std::string>{
        "toolkit.version: " + text::printable(stored.toolkit.version) +
        " as locked cannot be resolved now: " + resolved.error().message};
  }
  auto frameworks = lock::check_frameworks(stored.frameworks, resolved->frameworks);
  auto companions = lock::check_companions(stored.frameworks, project.pins.companions);
  auto& fresh = resolved->lock;
  fresh.request = lock::request_of(project.pins);  // what .cudaenv asks, not the narrowed pins
  fresh.frameworks = std::move(frameworks.current);
  fresh.frameworks.merge(companions.current);
  auto found = lock::differences(stored, fresh);
  for (auto& line : frameworks.problems) found.push_back(std::move(line));
  for (auto& line : companions.problems) found.push_back(std::move(line));
  for (auto& line : lock::stale_receipts(stored, lock::set_digest(fresh)))
    found.push_back(std::move(line));
  return found;
}

std::vector<project::DeclaredTarget> recorded_targets(const lock::LockFile& stored) {
  std::vector<project::DeclaredTarget> out;
  for (const auto& [name, target] : stored.targets) {
    const auto driver = Version::parse(target.driver);
    if (!driver) return {};
    project::DeclaredTarget declared;
    declared.name = name;
    declared.driver = *driver;
    declared.gpus = target.gpus;
    declared.gpus_named = true;  // the lock's archs are those of its GPUs
    for (const auto& arch : target.archs) {
      if (auto version = Version::parse(arch)) declared.archs.push_back(*version);
    }
    out.push_back(std::move(declared));
  }
  return out;
}

Result<lock::LockFile> write_project_lock(const LockProject& project, const DownloadSetup& setup,
                                          Context& context) {
  auto fresh = fresh_lock(project, setup, context);
  if (!fresh) return fresh.error();
  const auto path = project.lock_path();
  if (auto old = lock::read_lock_file(path)) lock::keep_valid_receipts(*old, *fresh);
  if (auto written = lock::write_lock_file(path, *fresh); !written) return written.error();
  context.out << "wrote " << text::printable(path.string(), text::message_limit) << ": "
              << summary(*fresh) << '\n';
  return fresh;
}

Status run_lock(const LockOptions& options, Context& context) {
  auto project = find_lock_project(context);
  if (!project) return project.error();
  auto setup = download_setup(options.download, context);
  if (!setup) return setup.error();
  if (options.check) return check_lock(*project, *setup, context);
  auto written = write_project_lock(*project, *setup, context);
  if (!written) return written.error();
  return Ok{};
}

void add_lock_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<LockOptions>();
  auto* command = app.add_subcommand(
      "lock", "Write .cudaenv.lock: one set for every [targets.NAME] .cudaenv declares");
  command->add_flag("--check", options->check,
                    "Only compare: exit 1 naming every difference when the lock is stale");
  add_download_flags(*command, options->download);
  add_source_flags(*command, options->download);
  command->callback(
      [options, &context, &outcome] { outcome.status = run_lock(*options, context); });
}

}  // namespace cudaenv::cli
