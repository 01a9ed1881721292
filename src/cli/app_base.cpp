#include "cli/activation_commands.hpp"
#include "cli/app.hpp"
#include "core/text.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace cudaenv::cli {

namespace {

constexpr int usage_exit = static_cast<int>(ErrorKind::usage);

int report_parse_error(const CLI::ParseError& error, CLI::App& app, Context& context) {
  // Help and --version are successful "errors" in CLI11's model.
  if (error.get_exit_code() == 0) {
    context.out << (dynamic_cast<const CLI::CallForVersion*>(&error)
                        ? std::string(error.what()) + "\n"
                        : app.help());
    return 0;
  }
  context.err << "cudaenv: error: " << text::printable(error.what(), text::message_limit) << '\n'
              << "hint: run 'cudaenv --help' for the commands and their flags\n";
  return usage_exit;
}

// The one place errors are printed: what they embed came from files, the network and the
// environment, so control characters are escaped and long values cut.
int report_error(const Error& error, Context& context) {
  context.err << "cudaenv: error: " << text::printable(error.message, text::message_limit) << '\n';
  if (!error.hint.empty())
    context.err << "hint: " << text::printable(error.hint, text::message_limit) << '\n';
  return static_cast<int>(error.kind);
}

}  // namespace

int run_commands(int argc, const char* const* argv, Context& context,
                 const std::function<void(CLI::App&, Outcome&)>& add_commands) {
  CLI::App app{"cudaenv: install, select and verify CUDA toolchains side by side", "cudaenv"};
  app.set_version_flag("--version", "cudaenv " CUDAENV_VERSION_STRING);
  app.require_subcommand(1);
  Outcome outcome;
  add_commands(app, outcome);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return report_parse_error(error, app, context);
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
