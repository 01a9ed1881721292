#pragma once
// The command table: each command registers its flags on the CLI11 app and runs through a
// run_<verb>(options, context) function that tests can call without CLI11.

#include <memory>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/download_setup.hpp"
#include "cli/outcome.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::cli {

// `cudaenv arch`: what each ecosystem needs for this machine's GPUs or a declared target's.
void add_arch_command(CLI::App& app, Context& context, Outcome& outcome);

struct InfoOptions {
  bool json = false;
};
int run_info(const InfoOptions& options, Context& context);
void add_info_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli

namespace cudaenv::cli {

struct ResolveOptions {
  std::string cuda, cudnn, torch, tensorflow, jax;
  std::string driver, gcc;
  std::vector<std::string> arch;
  std::vector<std::string> gpu;  // GPU models ("H100"), as the database names them
  bool no_detect = false;
  bool json = false;
  bool verbose = false;
  bool include_unchecked = false;
};
// Exit code 0 with a set, 4 when nothing fits (in outcome); errors for bad flags and unknown
// versions.
Status run_resolve(const ResolveOptions& options, Context& context, Outcome& outcome);
void add_resolve_command(CLI::App& app, Context& context, Outcome& outcome);
// What `cudaenv resolve` answers for these options, with the same detection and database; a
// request naming versions the database does not know is ErrorKind::not_found.
struct ResolveAnswer {
  std::unique_ptr<manifest::Database> db;  // the resolution points into it
  resolve::Resolution resolution;
};
Result<ResolveAnswer> resolve_here(const ResolveOptions& options, Context& context);
// `cudaenv pip-args`; and the pip and uv lines for what the nearest .cudaenv pins (a warning when
// none fits), printed by `use` after it pins a framework.
void add_pip_command(CLI::App& app, Context& context, Outcome& outcome);
void print_pinned_pip_lines(Context& context);

}  // namespace cudaenv::cli

namespace cudaenv::cli {

struct InstallOptions {
  std::string spec;
  std::string cudnn;
  std::string components = "full";
  bool force = false;
  bool runtime_only = false;  // --source pypi: accept a CUDA 11/12 prefix without nvcc
  DownloadFlags download;
};
Status run_install_command(const InstallOptions& options, Context& context);
void add_install_command(CLI::App& app, Context& context, Outcome& outcome);

struct StoreOptions {
  std::string version;
  bool json = false;
  bool cudnn = false;
  std::string cudnn_spec;  // uninstall --cudnn SPEC
  bool force = false;      // uninstall --force: also the global default
  bool yes = false;        // uninstall --yes: also what is active here, without asking
  DownloadFlags download;
};
// `cudaenv list`, `cudaenv list-remote`, `cudaenv uninstall [SPEC] [--cudnn SPEC] [--force]`.
void add_store_commands(CLI::App& app, Context& context, Outcome& outcome);
// `cudaenv cache [--json]`, `cudaenv cache clean`, `cudaenv cache prune`.
void add_cache_command(CLI::App& app, Context& context, Outcome& outcome);

struct MirrorOptions {
  std::string directory;
  std::string cuda;
  std::string cudnn;
  std::string components = "full";
  DownloadFlags download;  // --mirror is the upstream here
  std::string bundle;      // --with-cudaenv: a release bundle to serve too
  std::string public_url;  // --url: where the mirror is served, baked into its get script
};
void add_mirror_command(CLI::App& app, Context& context, Outcome& outcome);
// `cudaenv self-update`: the newer release bundle from the mirror, in place of this one.
void add_self_update_command(CLI::App& app, Context& context, Outcome& outcome);
// `cudaenv export dockerfile|apptainer`: a container recipe for the project here.
void add_export_command(CLI::App& app, Context& context, Outcome& outcome);

struct UseOptions {
  std::string spec;
  std::string cudnn, torch, tensorflow, jax;
  bool global = false;
  bool install = false;
  bool unset = false;      // --unset: remove the pin instead (--global system does it globally)
  bool force = false;      // pin a release the database does not know (a newer one, a typo's cure)
  DownloadFlags download;  // where --install takes what is missing from
};
// Writes .cudaenv (or, with --global, the config) keeping comments and unknown keys; warns, never
// fails, when the version is not installed or this machine cannot run it.
Status run_use(const UseOptions& options, Context& context);
// `cudaenv use` and `cudaenv rehash`.
void add_use_commands(CLI::App& app, Context& context, Outcome& outcome);
// Recreates the shims after an install or uninstall; a failure is only a warning.
void refresh_shims(Context& context);
// `cudaenv jupyter install|list|uninstall`; and rewriting the env of the kernelspecs it installed
// to their projects' toolkits now, after use, rehash and an install (a failure is only a warning).
void add_jupyter_command(CLI::App& app, Context& context, Outcome& outcome);
// `cudaenv compat install|list|uninstall`: NVIDIA's forward-compatibility packages.
void add_compat_command(CLI::App& app, Context& context, Outcome& outcome);
void refresh_jupyter_kernels(Context& context);
// `cudaenv modules write`; and rewriting the config's modules_dir after an install or uninstall
// (a failure is only a warning).
void add_modules_command(CLI::App& app, Context& context, Outcome& outcome);
void refresh_modules(Context& context);
struct DoctorOptions {
  bool json = false;
};
// Exit code 0 when no check fails, 1 when any does (in outcome); errors for an unreadable database.
Status run_doctor(const DoctorOptions& options, Context& context, Outcome& outcome);
void add_doctor_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli

namespace cudaenv::cli {

struct BootstrapOptions {
  std::vector<std::string> cuda;
  int driver = 0;  // 0: the branch the database names for the newest CUDA
  bool container = false;
  bool dry_run = false;
  bool yes = false;
  DownloadFlags download;  // --source, --index-url: where the toolkit steps install from
};
// Exit 0 when the plan ran (or is waiting for a reboot) or was printed; errors for an unsupported
// OS, an unknown CUDA version, and a failed or declined step.
Status run_bootstrap(const BootstrapOptions& options, Context& context, Outcome& outcome);
void add_bootstrap_command(CLI::App& app, Context& context, Outcome& outcome);
struct VerifyOptions {
  std::string spec;  // empty: the active toolkit, else the system's
  std::string cudnn;
  std::vector<std::string> only_arch;  // diagnostic: deliberately wrong builds
  bool no_ptx = false;
  bool torch = false, tensorflow = false, jax = false;
  bool json = false;
  bool record = false;      // --record: a receipt in .cudaenv.lock when it passes
  bool build_only = false;  // --build-only: build and stop (a machine without a GPU)
};
// Exit code 0 when the toolkit is proven, 7 with the cause when not (in outcome); errors for bad
// flags (2) and a SPEC that is not installed (3).
Status run_verify(const VerifyOptions& options, Context& context, Outcome& outcome);
void add_verify_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli

namespace cudaenv::cli {

struct ScanOptions {
  std::vector<std::string> paths;
  std::string python;
  std::vector<std::string> arch;
  bool json = false;
};
// Exit code 0 when every binary has code the GPUs can run, 1 when one has none (in outcome).
Status run_scan(const ScanOptions& options, Context& context, Outcome& outcome);
void add_scan_command(CLI::App& app, Context& context, Outcome& outcome);

struct WhyOptions {
  std::string library;
  std::string for_file;
  bool json = false;
};
// Exit code 0 when a copy loads, 1 when it is not the active toolkit's, 3 when none does.
Status run_why(const WhyOptions& options, Context& context, Outcome& outcome);
void add_why_command(CLI::App& app, Context& context, Outcome& outcome);

}  // namespace cudaenv::cli
