#include "cli/help.hpp"

#include <algorithm>
#include <memory>
#include <numeric>

#include "core/error.hpp"
#include "core/text.hpp"

namespace cudaenv::cli {

namespace {

std::string shown(std::string_view word) { return text::printable(word); }

bool is_flag_word(std::string_view word) {
  return word.size() > 1 && word[0] == '-' && !(word[1] >= '0' && word[1] <= '9');
}

// The option spelled `name` ("--json", "-q") on this command or, as CLI11 falls through to
// the parents, on one of them.
const CLI::Option* find_flag(const CLI::App& command, const std::string& name) {
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    const auto* option = app->get_option_no_throw(name);
    if (option != nullptr && option->nonpositional()) return option;
    if (!app->get_fallthrough()) break;
  }
  return nullptr;
}

std::vector<std::string> flag_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    for (const auto* option : app->get_options()) {
      for (const auto& name : option->get_lnames()) names.push_back("--" + name);
      for (const auto& name : option->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

const CLI::App* subcommand_named(const CLI::App& command, std::string_view name) {
  for (const auto* sub : command.get_subcommands({})) {
    if (!sub->get_name().empty() && sub->check_name(std::string(name))) return sub;
  }
  return nullptr;
}

bool takes_positionals(const CLI::App& command) {
  return !command.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

std::string did_you_mean(const std::vector<std::string>& nearest, std::string_view prefix) {
  if (nearest.empty()) return "";
  std::string list;
  for (const auto& name : nearest) {
    if (!list.empty()) list += " or ";
    list += "`" + std::string(prefix) + name + "`";
  }
  return "did you mean " + list + "? ";
}

std::string help_hint(const CLI::App& command) {
  const auto path = command_path(command);
  if (command.get_parent() == nullptr) return "'cudaenv help' lists the commands";
  const auto* what = visible_commands(command).empty() ? "flags" : "commands";
  return "'cudaenv help" + path.substr(std::string("cudaenv").size()) + "' lists its " + what;
}

UsageProblem unknown_command(const CLI::App& parent, std::string_view word) {
  std::vector<std::string> names;
  for (const auto* sub : visible_commands(parent)) names.push_back(sub->get_name());
  const bool top = parent.get_parent() == nullptr;
  const auto prefix = top ? std::string() : command_path(parent) + " ";
  const auto where = top ? std::string() : " for '" + command_path(parent) + "'";
  return {"unknown command '" + shown(word) + "'" + where,
          did_you_mean(nearest_names(word, names), prefix) + help_hint(parent)};
}

UsageProblem unknown_flag(const CLI::App& command, std::string_view flag) {
  // A single letter is one edit from every other: no guess for "-x".
  const bool single_letter = flag.size() == 2;
  return {"unknown flag '" + shown(flag) + "' for '" + command_path(command) + "'",
          (single_letter ? "" : did_you_mean(nearest_names(flag, flag_names(command)), "")) +
              help_hint(command)};
}

std::optional<UsageProblem> missing_command(const CLI::App& command) {
  if (command.get_require_subcommand_min() == 0) return {};
  if (command.get_parent() == nullptr) return UsageProblem{"no command given", help_hint(command)};
  std::vector<std::string> names;
  for (const auto* sub : visible_commands(command)) names.push_back(sub->get_name());
  return UsageProblem{"'" + command_path(command) + "' needs a command: " + text::join(names, ", "),
                      help_hint(command)};
}

// Whether the flag word consumes the next argument as its value ("--mirror URL").
bool takes_next_word(const CLI::Option& option, std::string_view word) {
  if (option.get_type_size_max() == 0 || option.get_expected_max() == 0) return false;
  if (word.find('=') != std::string_view::npos) return false;
  return !(word.size() > 2 && word[1] != '-');  // "-jN" carries its value
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: the classic dynamic programme with adjacent transpositions.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> nearest_names(std::string_view word,
                                       const std::vector<std::string>& names) {
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  size_t best = allowed + 1;
  std::vector<std::string> nearest;
  for (const auto& name : names) {
    const size_t distance = edit_distance(word, name);
    if (distance > best) continue;
    if (distance < best) nearest.clear();
    best = distance;
    if (std::find(nearest.begin(), nearest.end(), name) == nearest.end()) nearest.push_back(name);
  }
  if (nearest.size() > 3) nearest.resize(3);
  return nearest;
}

std::vector<const CLI::App*> visible_commands(const CLI::App& app) {
  return app.get_subcommands(
      [](const CLI::App* sub) { return !sub->get_name().empty() && !sub->get_group().empty(); });
}

std::string command_path(const CLI::App& app) {
  if (app.get_parent() == nullptr) return "cudaenv";
  return command_path(*app.get_parent()) + " " + app.get_name();
}

std::string command_help(const CLI::App& command) {
  // CLI11's own App::help would show the parsed subcommand (`help`) instead: ask the formatter.
  const auto* parent = command.get_parent();
  const auto name = parent == nullptr ? command.get_name() : command_path(command);
  return command.get_formatter()->make_help(&command, name, CLI::AppFormatMode::Normal);
}

std::string short_help(const CLI::App& root) {
  const auto commands = visible_commands(root);
  const size_t width = std::accumulate(
      commands.begin(), commands.end(), size_t{0},
      [](size_t w, const CLI::App* c) { return std::max(w, c->get_name().size()); });
  std::string out = root.get_description() + "\n\nUsage: cudaenv [--quiet] COMMAND [ARGS]...\n\n";
  out += "Commands:\n";
  for (const auto* command : commands) {
    out += "  " + command->get_name() + std::string(width - command->get_name().size() + 2, ' ') +
           command->get_description() + "\n";
  }
  out += "\nRun 'cudaenv help COMMAND' for a command's flags, 'cudaenv --help' for all options.\n";
  return out;
}

std::optional<UsageProblem> diagnose_arguments(const CLI::App& root, int argc,
                                               const char* const* argv) {
  const CLI::App* command = &root;
  bool value_next = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (value_next) {
      value_next = false;
      continue;
    }
    if (word == "--") return {};  // the rest belongs to the command (exec)
    if (is_flag_word(word)) {
      const auto name = std::string(word.substr(0, word[1] == '-' ? word.find('=') : 2));
      const auto* option = find_flag(*command, name);
      if (option == nullptr) return unknown_flag(*command, name);
      value_next = takes_next_word(*option, word);
      continue;
    }
    if (const auto* sub = subcommand_named(*command, word)) {
      command = sub;
      continue;
    }
    if (takes_positionals(*command)) continue;
    if (!command->get_subcommands({}).empty()) return unknown_command(*command, word);
    return UsageProblem{
        "unexpected argument '" + shown(word) + "' for '" + command_path(*command) + "'",
        help_hint(*command)};
  }
  return missing_command(*command);
}

FoundCommand find_command(const CLI::App& root, const std::vector<std::string>& words) {
  const CLI::App* command = &root;
  for (const auto& word : words) {
    const auto* sub = subcommand_named(*command, word);
    if (sub == nullptr) return {nullptr, unknown_command(*command, word)};
    command = sub;
  }
  return {command, std::nullopt};
}

void add_help_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto words = std::make_shared<std::vector<std::string>>();
  auto* help = app.add_subcommand("help", "Show the help of a command: cudaenv help install");
  help->add_option("COMMAND", *words, "The command (and subcommand), e.g. mirror create");
  help->callback([words, &app, &context, &outcome] {
    const auto found = find_command(app, *words);
    if (found.problem) {
      outcome.status = make_error(ErrorKind::usage, found.problem->message, found.problem->hint);
      return;
    }
    context.out << command_help(*found.command);
  });
}

}  // namespace cudaenv::cli
