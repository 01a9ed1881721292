#include "cli/help_table.hpp"

#include <algorithm>
#include <cctype>

#include "cli/help.hpp"
#include "core/text.hpp"

namespace cudaenv::cli {

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string uppercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// The shells a value names, as its description lists them ("bash, zsh, fish or json").
std::string shell_choices(const std::string& description) {
  std::vector<std::string> choices;
  for (const char* word : {"bash", "zsh", "fish", "json"}) {
    if (text::contains(description, word)) choices.emplace_back(word);
  }
  if (choices.empty()) choices = {"bash", "zsh", "fish"};
  return "words:" + text::join(choices, ",");
}

// The values a description lists after its colon ("Output: text, conda or json").
std::string listed_choices(const std::string& description) {
  const auto colon = description.find(": ");
  if (colon == std::string::npos) return "";
  auto list = description.substr(colon + 2);
  std::vector<std::string> choices;
  for (auto& part : text::split(list, ',')) {
    auto word = std::string(text::trim(part));
    if (const auto last_or = word.find(" or "); last_or != std::string::npos) {
      choices.push_back(word.substr(0, last_or));
      word = word.substr(last_or + 4);
    }
    choices.push_back(word);
  }
  return "words:" + text::join(choices, ",");
}

// Commands that act on what is installed: their versions complete from the store alone.
bool acts_on_installed(const std::string& path) {
  const auto top = path.substr(0, path.find(' '));
  return top == "uninstall" || top == "verify" || top == "exec";
}

// What completes a value, read from the names the commands give their options and arguments.
std::string value_kind(const std::string& path, const std::string& name,
                       const std::string& description) {
  const auto start = name.find_first_not_of('-');
  if (start == std::string::npos) return "";
  const auto plain = lowercase(name.substr(start));
  if (plain == "spec" || plain == "version" || plain == "cuda")
    return acts_on_installed(path) ? "installed" : "versions";
  if (plain == "cudnn") return "cudnn";
  if (plain == "shell") return shell_choices(description);
  if (plain == "format") return listed_choices(description);
  if (plain == "dir" || plain == "directory") return "directories";
  if (plain == "file" || plain == "path") return "files";
  if (plain == "command") return path == "help" ? "commands" : "programs";
  return "";
}

std::string value_name(const CLI::Option& option, const std::string& kind) {
  if (kind == "versions" || kind == "installed" || kind == "cudnn") return "SPEC";
  if (kind == "directories") return "DIR";
  if (text::starts_with(kind, "words:"))
    return option.get_lnames().empty() ? "SHELL" : uppercase(option.get_lnames().front());
  if (option.get_type_name() == "INT" || option.get_type_name() == "UINT") return "N";
  if (text::contains(lowercase(option.get_description()), "spec")) return "SPEC";
  if (!option.get_lnames().empty()) return uppercase(option.get_lnames().front());
  return "VALUE";
}

FlagEntry flag_entry(const std::string& path, const CLI::Option& option) {
  FlagEntry entry;
  for (const auto& name : option.get_snames()) entry.names.push_back("-" + name);
  for (const auto& name : option.get_lnames()) entry.names.push_back("--" + name);
  entry.description = option.get_description();
  if (option.get_type_size_max() > 0 && option.get_expected_max() > 0) {
    entry.kind = value_kind(path, entry.names.back(), entry.description);
    entry.value = value_name(option, entry.kind);
  }
  return entry;
}

PositionalEntry positional_entry(const std::string& path, const CLI::Option& option) {
  const auto& name = option.get_name(true, false);
  return {name, value_kind(path, name, option.get_description()), option.get_description(),
          option.get_expected_max() > 1, option.get_required()};
}

void add_command(const CLI::App& command, const std::string& path,
                 std::vector<CommandEntry>& table) {
  CommandEntry entry{path, command.get_description(), {}, {}, {}};
  for (const auto* option : command.get_options()) {
    if (option->get_positional() && !option->nonpositional())
      entry.positionals.push_back(positional_entry(path, *option));
    else
      entry.flags.push_back(flag_entry(path, *option));
  }
  const auto subcommands = visible_commands(command);
  for (const auto* sub : subcommands) {
    if (plain_name(sub->get_name())) entry.subcommands.push_back(sub->get_name());
  }
  table.push_back(std::move(entry));
  for (const auto* sub : subcommands) {
    if (plain_name(sub->get_name()))
      add_command(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), table);
  }
}

}  // namespace

std::vector<CommandEntry> command_table(const CLI::App& root) {
  std::vector<CommandEntry> table;
  add_command(root, "", table);
  return table;
}

bool plain_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace cudaenv::cli
