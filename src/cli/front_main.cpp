// `cudaenv`: the front program. It runs the activation commands itself (the prompt hook and
// `exec` must start in about a millisecond, which a program linking libcurl and libarchive
// cannot) and replaces itself with the full program for every other command.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>

#include "cli/activation_commands.hpp"
#include "cli/app.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/text.hpp"

namespace {

// The fast commands never load a driver library; with no dlopen the front can link statically.
class NoDriverLibraries final : public cudaenv::probe::LibraryLoader {
 public:
  std::unique_ptr<cudaenv::probe::SharedLibrary> open(const std::string&) override {
    return nullptr;
  }
};

int run_full_program(char** argv) {
  const auto full = cudaenv::paths::companion_program("cudaenv-full");
  ::execv(full.c_str(), argv);
  std::cerr << "cudaenv: error: cannot run "
            << cudaenv::text::printable(full.string(), cudaenv::text::message_limit) << ": "
            << std::strerror(errno) << "\nhint: reinstall cudaenv (scripts/setup)\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cudaenv;
  // Once, before anything runs: a closed pipe (a child gone, `| head`) is an EPIPE error, not
  // death.
  ignore_broken_pipe_signal();
  if (!cli::is_activation_command(argc, argv)) return run_full_program(argv);
  try {
    auto env = Environment::from_process();
    // HOME unset, empty or relative: only the full program may ask the passwd database (NSS in
    // a static program breaks on sssd and LDAP machines), so it answers this run.
    if (paths::needs_home_lookup(env)) return run_full_program(argv);
    if (auto roots = paths::check_root_variables(env); !roots) {
      std::cerr << "cudaenv: error: " << roots.error().message << "\nhint: " << roots.error().hint
                << '\n';  // printable already: check_root_variables escapes the value
      return static_cast<int>(roots.error().kind);
    }
    SystemProcessRunner runner;
    const Sysroot sysroot(paths::sysroot(env));
    NoDriverLibraries loader;
    const bool colour = cli::colour_wanted(1, env);
    cli::Context context{std::move(env), sysroot, runner, loader, std::cout, std::cerr, colour};
    return cli::run_activation_app(argc, argv, context);
  } catch (const std::exception& error) {
    std::cerr << "cudaenv: internal error: " << text::printable(error.what(), text::message_limit)
              << '\n';
    return 1;
  }
}
