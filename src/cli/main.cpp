#include <exception>
#include <iostream>
#include <new>

#include "cli/app.hpp"
#include "cli/terminal.hpp"
#include "core/passwd.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "install/extract.hpp"

int main(int argc, char** argv) {
  using namespace cudaenv;
  // Once, before anything runs: a closed pipe (a child gone, `| head`) is an EPIPE error, not
  // death; and the umask is set before any thread, so extraction never races it.
  ignore_broken_pipe_signal();
  stop_children_on_interrupt();  // children lead their own groups: Ctrl-C does not reach them
  install::restrict_process_umask();
  // HOME unset, owners' names: the passwd database, which only this dynamically linked program
  // may ask NSS for.
  accounts::install(accounts::passwd_lookup());
  try {
    const auto env = Environment::from_process();
    if (auto roots = paths::check_root_variables(env); !roots) {
      std::cerr << "cudaenv: error: " << roots.error().message << "\nhint: " << roots.error().hint
                << '\n';  // printable already: check_root_variables escapes the value
      return static_cast<int>(roots.error().kind);
    }
    SystemProcessRunner runner;
    const Sysroot sysroot(paths::sysroot(env));
    probe::DlLibraryLoader loader(sysroot);
    cli::Context context{
        env, sysroot, runner, loader, std::cout, std::cerr, cli::colour_wanted(1, env)};
    return cli::run_app(argc, argv, context);
  } catch (const std::bad_alloc&) {
    // Memory ran out (a limit set by ulimit -v, a full machine): a failure to report, not a bug.
    std::cerr << "cudaenv: error: out of memory\n"
                 "hint: free memory (or raise the limit set by ulimit -v), then run the command "
                 "again\n";
    return 1;
  } catch (const std::exception& error) {
    // Domain code returns errors as values; reaching here is a bug, reported without a stack dump.
    std::cerr << "cudaenv: internal error: " << text::printable(error.what(), text::message_limit)
              << '\n';
    return 1;
  }
}
