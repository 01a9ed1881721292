// `cudaenv pip-args [FRAMEWORK]`: the arguments of the pip line that installs the framework the
// nearest .cudaenv pins, one per line, for scripts: `pip install $(cudaenv pip-args)`.

#include "cli/commands.hpp"
#include "core/text.hpp"
#include "resolve/pip_lines.hpp"

namespace cudaenv::cli {

namespace {

struct PipArgsOptions {
  std::string framework;  // empty: the only one pinned
};

// The builds the resolver chose for the frameworks the project pins (resolve with no flags reads
// the nearest .cudaenv). Errors: no pin (not found), no set that fits (no compatible set).
Result<std::vector<resolve::FrameworkChoice>> pinned_choices(Context& context) {
  auto answer = resolve_here(ResolveOptions{}, context);
  if (!answer) return answer.error();
  const auto& resolution = answer->resolution;
  if (!resolution.ok()) {
    const auto why = resolution.rejected.empty() ? std::string("nothing fits")
                                                 : resolution.rejected.front().candidate + ": " +
                                                       resolution.rejected.front().reason;
    return make_error(ErrorKind::no_compatible_set, "the project's pins fit no build here: " + why,
                      resolution.suggestions.empty() ? "cudaenv resolve shows every candidate"
                                                     : resolution.suggestions.front());
  }
  if (resolution.best().frameworks.empty())
    return make_error(ErrorKind::not_found,
                      "no framework pinned: no .cudaenv with a [frameworks] table here or above",
                      "pin one: cudaenv use --torch 2.9");
  return resolution.best().frameworks;
}

Result<resolve::FrameworkChoice> pick(const std::vector<resolve::FrameworkChoice>& choices,
                                      const std::string& framework) {
  std::vector<std::string> names;
  for (const auto& choice : choices) {
    if (choice.name == framework || (framework.empty() && choices.size() == 1)) return choice;
    names.push_back(choice.name);
  }
  if (framework.empty())
    return make_error(ErrorKind::usage,
                      "several frameworks are pinned (" + text::join(names, ", ") +
                          "): name one, their packages come from different indexes",
                      "cudaenv pip-args " + names.front());
  return make_error(ErrorKind::not_found,
                    "FRAMEWORK: " + text::printable(framework) +
                        " is not pinned here (pinned: " + text::join(names, ", ") + ")",
                    "pin it: cudaenv use --" + names.front() + " VERSION");
}

Status run_pip_args(const PipArgsOptions& options, Context& context) {
  auto choices = pinned_choices(context);
  if (!choices) return choices.error();
  auto choice = pick(*choices, options.framework);
  if (!choice) return choice.error();
  for (const auto& arg : choice->pip_args)
    context.out << text::printable(arg, text::message_limit) << '\n';
  return Ok{};
}

}  // namespace

void print_pinned_pip_lines(Context& context) {
  auto choices = pinned_choices(context);
  if (!choices) {
    context.err << "warning: " << text::printable(choices.error().message, text::message_limit);
    if (!choices.error().hint.empty())
      context.err << "; " << text::printable(choices.error().hint, text::message_limit);
    context.err << '\n';
    return;
  }
  for (const auto& choice : *choices) {
    // Names, versions and commands from the database, which `db update` fetches: escaped.
    context.out << "install " << text::printable(choice.name) << " "
                << text::printable(choice.version) << " (" << text::printable(choice.variant)
                << "): " << text::printable(choice.install, text::message_limit) << '\n'
                << "    or: "
                << text::printable(resolve::pip_command(choice.pip_args, resolve::PipTool::uv),
                                   text::message_limit)
                << '\n';
  }
}

void add_pip_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<PipArgsOptions>();
  auto* command = app.add_subcommand(
      "pip-args",
      "Print the pip arguments (one per line) that install the framework .cudaenv pins");
  command->add_option("FRAMEWORK", options->framework,
                      "torch, tensorflow or jax (needed only when several are pinned)");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_pip_args(*options, context); });
}

}  // namespace cudaenv::cli
