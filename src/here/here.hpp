#pragma once
// What applies in this directory, and why: one value, computed once per process, that every
// command reads (the hook, the shims, env, exec, which, list, current, doctor, verify, scan, why).
// It holds the selection and its source, the stores consulted, the toolkit and cuDNN that serve
// it (a store's, or a system toolkit that satisfies a pin), what is missing when none does, and a
// trace of the rules that decided, for CUDAENV_DEBUG=1 and `cudaenv current --explain`.
// Light by design: the prompt hook computes it on every prompt, so it reads files, never runs
// a program.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/sysroot.hpp"
#include "core/version.hpp"
#include "forward/decision.hpp"
#include "install/store.hpp"
#include "project/selection.hpp"

namespace cudaenv::here {

// Where the toolkit that serves a selection lives.
enum class ToolkitPlace {
  user_store,    // the user's data root
  system_store,  // a read-only store an admin filled (CUDAENV_SYSTEM_ROOTS)
  system_prefix  // a toolkit installed outside cudaenv, where probe looks, that satisfies the
                 // pin
};

struct ServingToolkit {
  install::Installed installed;  // path (as this process reaches it) and release version
  ToolkitPlace place = ToolkitPlace::user_store;
  std::string machine_path;  // system_prefix only: its path on the machine (below any sysroot)
};

// A forward-compatibility library installed for the serving toolkit (<store>/compat/<X.Y>/lib,
// `cudaenv compat install`), and whether it goes first on LD_LIBRARY_PATH here.
struct ForwardCompat {
  std::filesystem::path directory;  // the library's directory
  Version cuda;                     // the toolkit minor it was installed for
  std::string library_version;      // 570.124.06
  forward::Decision decision;
};

struct Here {
  project::Selection selection;
  std::filesystem::path directory;  // where the question was asked
  install::Store store;             // the user's root, then the system stores, in order
  std::optional<ServingToolkit> toolkit;
  std::optional<install::Installed> cudnn;
  // Selected but served by nothing: the one error every command reports (not_found, with the
  // install command as the hint). The environment is then the system's, as if nothing applied.
  std::optional<Error> missing;
  // When nothing is selected (or nothing serves the selection): the system's toolkit the builds
  // here get, from files alone, in active_toolkit's order — the nvcc on PATH (links resolved),
  // $CUDA_HOME, the distribution's nvidia-cuda-toolkit, /usr/local/cuda (resolved) — as this
  // process reaches it; "" none. `system_origin` names the rule ("nvcc on PATH", ...).
  std::string system_prefix;
  std::string system_origin;
  // The rules that decided, one line each, in order.
  std::vector<std::string> trace;
  // The forward-compatibility library for the toolkit, if one is installed: the one put first
  // when any applies, else the first considered with why it does not. nullopt: none installed.
  std::optional<ForwardCompat> forward_compat;

  bool selects_cuda() const { return selection.cuda.has_value(); }
};

// `forced_cuda` (exec --cuda) wins over every other source. `base` is the environment without
// cudaenv's earlier activation. Errors: a malformed CUDAENV_VERSION, .cudaenv or config (naming
// the file and line), a data root, prefix or program another user could write (never used).
// Toolkits outside the stores are looked for below `machine` (a fixture machine, a container's
// root); nullptr: below $CUDAENV_SYSROOT, else /.
Result<Here> find_here(const Environment& base, const std::filesystem::path& cwd,
                       const std::optional<VersionSpec>& forced_cuda = std::nullopt,
                       const Sysroot* machine = nullptr);

// The first executable nvcc on PATH, as written there ("" none).
std::string first_nvcc_on_path(const Environment& env);

// The prefix of the first executable nvcc on PATH (its links resolved: /usr/local/cuda/bin/nvcc
// gives /usr/local/cuda-13.0), else $CUDA_HOME when it holds bin/nvcc; "" for none.
std::string reachable_system_prefix(const Environment& env);

// "12.4 (from /repo/.cudaenv)", "system (from system)": a selection for messages.
std::string describe_selection(const project::Selection& selection);

// Where a serving toolkit lives, for messages: "the user's store", "the system store /opt/x",
// "a system toolkit".
std::string describe_place(const Here& here);

// The trace as printed by CUDAENV_DEBUG=1: "cudaenv: debug: <line>" each, made printable.
std::string trace_lines(const Here& here);

// CUDAENV_DEBUG set to a non-empty value other than 0.
bool debug_enabled(const Environment& env);

}  // namespace cudaenv::here
