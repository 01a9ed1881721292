#include "cli/app.hpp"

#include "cli/activation_commands.hpp"
#include "cli/cmd_db.hpp"
#include "cli/cmd_lock.hpp"
#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/help.hpp"
#include "cli/man.hpp"

namespace cudaenv::cli {

int run_app(int argc, const char* const* argv, Context& context) {
  return run_commands(argc, argv, context, [&context](CLI::App& app, Outcome& outcome) {
    add_info_command(app, context, outcome);
    add_resolve_command(app, context, outcome);
    add_arch_command(app, context, outcome);
    add_pip_command(app, context, outcome);
    add_install_command(app, context, outcome);
    add_store_commands(app, context, outcome);
    add_cache_command(app, context, outcome);
    add_mirror_command(app, context, outcome);
    add_db_command(app, context, outcome);
    add_use_commands(app, context, outcome);
    add_activation_commands(app, context, outcome);
    add_doctor_command(app, context, outcome);
    add_bootstrap_command(app, context, outcome);
    add_verify_command(app, context, outcome);
    add_scan_command(app, context, outcome);
    add_why_command(app, context, outcome);
    add_lock_command(app, context, outcome);
    add_sync_command(app, context, outcome);
    add_modules_command(app, context, outcome);
    add_jupyter_command(app, context, outcome);
    add_compat_command(app, context, outcome);
    add_self_update_command(app, context, outcome);
    add_export_command(app, context, outcome);
    // Last: help, completion and the man page read the table the commands above filled.
    add_help_command(app, context, outcome);
    add_completion_commands(app, context, outcome);
    add_man_command(app, context, outcome);
  });
}

}  // namespace cudaenv::cli
