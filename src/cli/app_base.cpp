#include "cli/activation_commands.hpp"
#include "cli/app.hpp"
#include "cli/help.hpp"
#include "core/text.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace cudaenv::cli {

namespace {

// The one place errors are printed: what they embed came from files, the network and the
// environment, so control characters are escaped and long values cut.
int report_error(const Error& error, Context& context) {
  context.err << "cudaenv: error: " << text::printable(error.message, text::message_limit) << '\n';
  if (!error.hint.empty())
    context.err << "hint: " << text::printable(error.hint, text::message_limit) << '\n';
  return static_cast<int>(error.kind);
}

// The command CLI11 got furthest into, for a hint that names its help.
const CLI::App& deepest_parsed(const CLI::App& app) {
  const auto parsed = app.get_subcommands();
  return parsed.empty() ? app : deepest_parsed(*parsed.front());
}

int report_parse_error(const CLI::ParseError& error, const CLI::App& app, int argc,
                       const char* const* argv, Context& context) {
  // Help and --version are successful "errors" in CLI11's model.
  if (error.get_exit_code() == 0) {
    context.out << (dynamic_cast<const CLI::CallForVersion*>(&error)
                        ? std::string(error.what()) + "\n"
                        : app.help());
    return 0;
  }
  // CLI11 says what went wrong in its terms ("A subcommand is required" for a mistyped one);
  // read the arguments against the table to name the word and what was meant.
  if (auto problem = diagnose_arguments(app, argc, argv)) {
    return report_error(make_error(ErrorKind::usage, problem->message, problem->hint), context);
  }
  const auto& command = deepest_parsed(app);
  const auto help =
      command.get_parent() == nullptr
          ? std::string("cudaenv help")
          : "cudaenv help" + command_path(command).substr(std::string("cudaenv").size());
  return report_error(
      make_error(ErrorKind::usage, error.what(), "run '" + help + "' for the commands and flags"),
      context);
}

// A command that takes a command line of its own (`exec CMD ARGS...`) leaves every word after
// its name to that command line: a `-q` there is CMD's, not a global flag.
void keep_command_lines_whole(CLI::App& app) {
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    const auto repeating = sub->get_options([](const CLI::Option* option) {
      return option->get_positional() && option->get_expected_max() > 1;
    });
    if (!repeating.empty()) sub->fallthrough(false);
    keep_command_lines_whole(*sub);
  }
}

}  // namespace

int run_commands(int argc, const char* const* argv, Context& context,
                 const std::function<void(CLI::App&, Outcome&)>& add_commands) {
  CLI::App app{"cudaenv: install, select and verify CUDA toolchains side by side", "cudaenv"};
  app.set_version_flag("--version", "cudaenv " CUDAENV_VERSION_STRING);
  app.add_flag("-q,--quiet", context.quiet,
               "Print only results, warnings and errors: no progress, no notes");
  app.fallthrough();  // set before the commands are added: they inherit it, so -q goes anywhere
  app.require_subcommand(1);
  Outcome outcome;
  add_commands(app, outcome);
  keep_command_lines_whole(app);
  app.footer("Run 'cudaenv help COMMAND' for the flags of one command.");
  if (argc <= 1) {
    context.out << short_help(app);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return report_parse_error(error, app, argc, argv, context);
  }
  if (!outcome.status) return report_error(outcome.status.error(), context);
  return outcome.exit_code;
}

int run_activation_app(int argc, const char* const* argv, Context& context) {
  return run_commands(argc, argv, context, [&context](CLI::App& app, Outcome& outcome) {
    add_activation_commands(app, context, outcome);
  });
}

}  // namespace cudaenv::cli
