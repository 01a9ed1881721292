// The shim: $CUDAENV_ROOT/shims/nvcc (and every other tool) links here. It finds the toolkit
// that applies in the current directory with the same rules as the prompt hook and replaces
// itself with that toolkit's tool, arguments untouched, in the environment `cudaenv exec` gives.
// Called as itself with `hook-env --shell SHELL` it answers the prompt hook. It links only
// cudaenv's activation code and uses no C++ streams, so it starts about as fast as an empty
// program.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "activate/hook.hpp"
#include "activate/shell.hpp"
#include "activate/shims.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "probe/kernel_module.hpp"
#include "probe/remembered_gpus.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace {

int fail(const std::string& tool, const cudaenv::Error& error) {
  using cudaenv::text::printable, cudaenv::text::message_limit;  // text from files: escaped
  std::fprintf(stderr, "cudaenv: %s: %s\n", printable(tool).c_str(),
               printable(error.message, message_limit).c_str());
  if (!error.hint.empty())
    std::fprintf(stderr, "hint: %s\n", printable(error.hint, message_limit).c_str());
  return static_cast<int>(error.kind);
}

// A tool's shim does not read the passwd database (a static program cannot use NSS), and it
// cannot hand the tool's run to another program without changing what runs.
cudaenv::Error home_unknown() {
  return cudaenv::make_error(
      cudaenv::ErrorKind::usage,
      "HOME is unset or not an absolute path, so the shim cannot tell your data root and config",
      "set HOME to your home directory (or CUDAENV_ROOT and XDG_CONFIG_HOME to absolute paths)");
}

// The full program answers what this static one must not look up (the passwd database).
int run_full_program(char** argv) {
  const auto full = cudaenv::paths::companion_program("cudaenv-full");
  ::execv(full.c_str(), argv);
  std::fprintf(stderr,
               "cudaenv: error: cannot run %s: %s\nhint: reinstall cudaenv (scripts/setup)\n",
               cudaenv::text::printable(full.string(), cudaenv::text::message_limit).c_str(),
               std::strerror(errno));
  return 1;
}

// `cudaenv-shim hook-env --shell SHELL`: what the prompt hook runs at a change, answered exactly
// as `cudaenv hook-env` answers it, by the program that starts fastest.
int hook_env(const char* shell_name, char** argv) {
  using namespace cudaenv;
  const auto shell = activate::parse_shell(shell_name);
  if (!shell) {
    std::fprintf(stderr,
                 "cudaenv: error: --shell: unknown shell \"%s\"\nhint: use bash, zsh or fish\n",
                 text::printable(shell_name).c_str());
    return static_cast<int>(ErrorKind::usage);
  }
  const auto env = Environment::from_process();
  if (paths::needs_home_lookup(env)) return run_full_program(argv);
  if (auto roots = paths::check_root_variables(env); !roots) return fail("hook-env", roots.error());
  // The kernel module's driver version and the GPUs the last full probe saw, for the note about
  // declared targets: no library loaded.
  const Sysroot sysroot(paths::sysroot(env));
  const auto module = probe::kernel_module_driver_version(sysroot);
  activate::LiveMachine machine;
  if (module) {
    machine.driver = Version::parse(*module);
    machine.gpus = probe::remembered_gpu_archs(sysroot, paths::data_root(env), *module);
  }
  const auto outcome = activate::hook_env(env, paths::working_directory(env), machine);
  const auto problem = activate::hook_problem_line(outcome);
  const auto statements = activate::hook_statements(*shell, outcome);
  std::fwrite(problem.data(), 1, problem.size(), stderr);
  std::fwrite(statements.data(), 1, statements.size(), stdout);
  return 0;
}

int run_tool(const std::string& tool, int argc, char** argv) {
  using namespace cudaenv;
  const auto env = Environment::from_process();
  if (auto guard = activate::check_shim_depth(env); !guard) return fail(tool, guard.error());
  if (paths::needs_home_lookup(env)) return fail(tool, home_unknown());
  if (auto roots = paths::check_root_variables(env); !roots) return fail(tool, roots.error());
  auto target = activate::resolve_tool(env, paths::working_directory(env), tool);
  if (!target) return fail(tool, target.error());
  std::vector<std::string> args{target->path};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return fail(tool, replace_process(args, target->environment.variables()));
}

int run(int argc, char** argv) {
  using namespace cudaenv;
  const std::string invoked = argc > 0 ? argv[0] : "";
  const std::string tool = invoked.substr(invoked.find_last_of('/') + 1);
  if (tool != activate::shim_program_name) return run_tool(tool, argc, argv);
  if (argc == 4 && std::string_view(argv[1]) == "hook-env" &&
      std::string_view(argv[2]) == "--shell")
    return hook_env(argv[3], argv);
  if (argc == 2 && std::string_view(argv[1]) == "--version") {  // self-update asks a new bundle
    std::puts("cudaenv-shim " CUDAENV_VERSION_STRING);
    return 0;
  }
  std::fprintf(stderr,
               "cudaenv-shim: run it through a link named after a tool "
               "($CUDAENV_ROOT/shims/nvcc); 'cudaenv rehash' creates them\n");
  return static_cast<int>(ErrorKind::usage);
}

}  // namespace

// Like cudaenv's own main: whatever escapes is one line and exit 1, never an abort.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudaenv-shim: error: %s\n",
                 cudaenv::text::printable(e.what(), cudaenv::text::message_limit).c_str());
  } catch (...) {
    std::fprintf(stderr, "cudaenv-shim: error: unexpected failure\n");
  }
  return 1;
}
