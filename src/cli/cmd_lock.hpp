#pragma once
// `cudaenv lock [--check]` and `cudaenv sync [--frozen]`: .cudaenv.lock per declared target.

#include <filesystem>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/download_setup.hpp"
#include "cli/outcome.hpp"
#include "lock/framework_index.hpp"
#include "lock/lock_file.hpp"
#include "project/project_file.hpp"

namespace cudaenv::cli {

struct LockOptions {
  bool check = false;
  DownloadFlags download;
};
// Writes the lock (exit 0), or with --check compares it (exit 0 current, 1 naming every
// difference; no framework index is asked); 4 when no set fits every target; 5 when a
// framework's package index cannot be read, 3 when it has no wheel that fits (nothing written).
Status run_lock(const LockOptions& options, Context& context);
void add_lock_command(CLI::App& app, Context& context, Outcome& outcome);

struct SyncOptions {
  bool frozen = false;
  DownloadFlags download;
};
// Installs exactly what the lock names and the mirror's manifests vouch for: a lock value that
// fails its grammar, or an archive list that is not exactly what the manifest of the locked
// release names, is exit 6 before anything is fetched, frozen or not; each archive is then
// checked against the lock's sha256 (exit 6 when one differs); --frozen fails (exit 1) when the
// lock is missing or stale, or the project's Python environment has another version of a locked
// framework. The frameworks are then installed there and proved (cli/sync_frameworks.hpp).
Status run_sync(const SyncOptions& options, Context& context);
void add_sync_command(CLI::App& app, Context& context, Outcome& outcome);

// The nearest .cudaenv and what it says; a usage error when there is none.
struct LockProject {
  std::filesystem::path file;
  project::ProjectFile pins;
  std::filesystem::path lock_path() const { return lock::lock_path_for(file); }
};
Result<LockProject> find_lock_project(Context& context);

// The architectures of the GPU models `targets` name (`gpu = "H100"`), from the database; a name it
// does not know is a usage error naming `file`'s line and the nearest known names.
Status name_target_gpus(std::vector<project::DeclaredTarget>& targets,
                        const std::filesystem::path& file, Context& context);

// Why `stored` is stale (docs/lockfile.md), one line each, stale receipts included: .cudaenv asks
// otherwise or the database changed (then against a fresh resolution), or what it names changed
// or vanished on the mirror (the locked set re-read). A mirror that gained releases is no reason.
// What `lock --check` and `sync --frozen` refuse.
Result<std::vector<std::string>> stale_lock_differences(const LockProject& project,
                                                        const lock::LockFile& stored,
                                                        const DownloadSetup& setup,
                                                        Context& context);

// Where framework wheels are looked up and installed from: PyPI's through the index install
// --source pypi uses; the per-build indexes (PyTorch's) through CUDAENV_FRAMEWORK_INDEX, else
// the config's framework_index, else their own servers.
lock::FrameworkIndexes framework_indexes(const DownloadSetup& setup, const Context& context);

// The targets `stored` records, as declarations: what an implicit target's lock (no [targets] in
// .cudaenv) is checked against on a machine without a GPU, and what `verify --record` matches.
std::vector<project::DeclaredTarget> recorded_targets(const lock::LockFile& stored);

// The setup `lock --check` and `sync` read a stored lock with: the lock's own source (its wheels
// from the user's index, or its archives from the user's mirror), unless --source or --index-url
// asks for another, which then makes the lock stale.
DownloadSetup following_lock(const DownloadSetup& setup, const lock::LockFile& stored);

// Resolves and writes the lock for `project`, keeping the receipts that still hold; prints what
// it wrote.
Result<lock::LockFile> write_project_lock(const LockProject& project, const DownloadSetup& setup,
                                          Context& context);

}  // namespace cudaenv::cli

namespace cudaenv::probe {
struct MachineFacts;
}

namespace cudaenv::cli {

// After a full probe (`info`, `verify`): the GPUs' archs, remembered for this boot so that the
// prompt hook and `current` can name a target mismatch without loading a driver library.
void remember_live_gpus(const probe::MachineFacts& facts, Context& context);

// For `verify`: a note on stderr when the nearest .cudaenv declares targets and this machine
// matches none of them, naming the closest and what it misses. Silent otherwise.
void note_target_mismatch(const probe::MachineFacts& facts, Context& context);

// `verify --record`: after a passing verification of `toolkit`, a receipt under the target this
// machine matches in the lock (date, GPU, arch, driver, toolkit, `report_sha256`), written back.
Status record_receipt(const probe::MachineFacts& facts, const std::string& toolkit,
                      const std::string& report_sha256, Context& context);

}  // namespace cudaenv::cli
