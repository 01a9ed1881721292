#include "cli/completion.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include "core/paths.hpp"
#include "core/text.hpp"
#include "install/store.hpp"
#include "manifest/load.hpp"
#include "project/stores.hpp"

namespace cudaenv::cli {

namespace {

// Versions for a completion, newest first, each once; a broken store or database yields fewer
// candidates, never an error (completion must stay quiet).
std::vector<std::string> completion_versions(const std::string& kind, Context& context) {
  const auto data_root = paths::data_root(context.env);
  const auto store = project::store_for(context.env);  // the system stores' versions too
  std::set<Version, std::greater<>> versions;
  const bool cudnn = kind == "cudnn";
  for (const auto& item : cudnn ? install::installed_cudnn(store, install::Receipts::skip)
                                : install::installed_toolkits(store, install::Receipts::skip)) {
    versions.insert(item.version);
  }
  if (kind != "installed") {
    if (auto db = manifest::load_default_database(data_root)) {
      if (cudnn) {
        for (const auto& release : db->cudnn_releases) versions.insert(release.version);
      } else {
        for (const auto& release : db->cuda_releases) versions.insert(release.version);
      }
    }
  }
  std::vector<std::string> shown;
  for (const auto& version : versions) shown.push_back(version.str());
  return shown;
}

Status print_completion(const std::string& shell, const CLI::App& root, Context& context) {
  const auto table = command_table(root);
  if (shell == "bash") {
    context.out << bash_completion(table);
  } else if (shell == "zsh") {
    context.out << zsh_completion(table);
  } else if (shell == "fish") {
    context.out << fish_completion(table);
  } else {
    return make_error(ErrorKind::usage,
                      "completion: unknown shell '" + text::printable(shell) + "'",
                      "name bash, zsh or fish: cudaenv completion bash");
  }
  return Ok{};
}

}  // namespace

std::vector<FlagEntry> offered_flags(const std::vector<CommandEntry>& table,
                                     const CommandEntry& command) {
  std::vector<FlagEntry> flags = command.flags;
  if (!command.path.empty())
    flags.insert(flags.end(), table.front().flags.begin(), table.front().flags.end());
  std::set<std::string> seen;
  std::vector<FlagEntry> unique;
  for (auto& flag : flags) {
    std::erase_if(flag.names, [&](const std::string& name) {
      return !plain_name(name) || !seen.insert(name).second;
    });
    if (!flag.names.empty()) unique.push_back(std::move(flag));
  }
  return unique;
}

void add_completion_commands(CLI::App& app, Context& context, Outcome& outcome) {
  auto shell = std::make_shared<std::string>();
  auto* completion = app.add_subcommand(
      "completion", "Print the shell completion script: source <(cudaenv completion bash)");
  completion->add_option("SHELL", *shell, "bash, zsh or fish")->required();
  completion->callback([shell, &app, &context, &outcome] {
    outcome.status = print_completion(*shell, app, context);
  });

  // What the scripts call at TAB time for versions; hidden, like `man`.
  auto kind = std::make_shared<std::string>();
  auto* complete = app.add_subcommand("__complete", "Completion candidates (for the scripts)");
  complete->group("");
  complete->add_option("KIND", *kind, "versions, installed or cudnn")->required();
  complete->callback([kind, &context, &outcome] {
    if (*kind != "versions" && *kind != "installed" && *kind != "cudnn") {
      outcome.status =
          make_error(ErrorKind::usage, "__complete: unknown kind '" + text::printable(*kind) + "'",
                     "name versions, installed or cudnn");
      return;
    }
    for (const auto& version : completion_versions(*kind, context)) context.out << version << '\n';
  });
}

}  // namespace cudaenv::cli
