// Whether this shell has what applies in its directory: a project's toolkit that the shell does
// not carry means the prompt hook is not installed, has stopped running, or is overridden by a
// later line of the rc file. Each cause is named with the line that mends it.

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "activate/shell.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "here/here.hpp"

namespace cudaenv::doctor {

namespace {

std::string shown(const std::string& value) {
  return value.empty() ? std::string("none") : text::printable(value, text::message_limit);
}

activate::HookInstall install_for(const ShellFacts& shell) {
  return activate::hook_install(activate::parse_shell(shell.shell).value_or(activate::Shell::bash));
}

std::string hook_env_line(const ShellFacts& shell) {
  const auto name = shell.shell.empty() ? std::string("bash") : shell.shell;
  return name == "fish" ? "cudaenv hook-env --shell fish | source"
                        : "eval \"$(cudaenv hook-env --shell " + name + ")\"";
}

}  // namespace

ShellFacts gather_shell_facts(const Environment& env, const activate::Applied* applied) {
  ShellFacts facts;
  if (applied == nullptr) return facts;
  // While the pin is missing, what the hook leaves: no activation.
  const Environment& wanted = applied->activation;
  facts.selected = applied->here.missing ? std::string("a selection that is not installed")
                                         : activate::describe_selection(applied->here.selection);
  facts.decided = true;
  facts.wanted_home = wanted.get("CUDA_HOME").value_or("");
  facts.wanted_active = wanted.get("CUDAENV_ACTIVE").value_or("");
  facts.wanted_nvcc = here::first_nvcc_on_path(wanted);
  facts.home = env.get("CUDA_HOME").value_or("");
  facts.active = env.get("CUDAENV_ACTIVE").value_or("");
  facts.nvcc = here::first_nvcc_on_path(env);
  facts.hook_ran = env.get("CUDAENV_DIFF").has_value();
  if (const auto shell = activate::login_shell(env.get("SHELL")))
    facts.shell = *shell == activate::Shell::bash  ? "bash"
                  : *shell == activate::Shell::zsh ? "zsh"
                                                   : "fish";
  return facts;
}

Finding check_shell_hook(const CheckInput& in) {
  auto f = finding("shell-hook", "This shell has what applies here");
  const auto& shell = in.facts.shell;
  if (!shell.decided) {
    conclude(f, CheckStatus::skip, "what applies here could not be decided (see the notes)");
    return f;
  }
  f.evidence = {
      "applies here: " + shown(shell.selected),
      "CUDA_HOME: this shell " + shown(shell.home) + ", here " + shown(shell.wanted_home),
      "nvcc first on PATH: this shell " + shown(shell.nvcc) + ", here " + shown(shell.wanted_nvcc)};
  const bool same_toolkit = shell.home == shell.wanted_home && shell.active == shell.wanted_active;
  if (same_toolkit && shell.nvcc == shell.wanted_nvcc) {
    conclude(f, CheckStatus::ok, "this shell's CUDA_HOME and nvcc are what applies here");
    return f;
  }
  const auto install = install_for(shell);
  if (!same_toolkit && shell.active.empty() && !shell.hook_ran && !shell.wanted_active.empty()) {
    conclude(f, CheckStatus::warn,
             "the shell hook is not installed: this shell's nvcc is " + shown(shell.nvcc) +
                 ", but CUDA " + shell.wanted_active + " applies here");
    f.fix = {"# add the hook as the last line of " + install.rc_file + ", then open a new shell",
             "echo '" + install.line + "' >> " + install.rc_file};
    return f;
  }
  if (!same_toolkit) {
    conclude(
        f, CheckStatus::warn,
        "the shell hook is stale: this shell carries CUDA " + shown(shell.active) + " but " +
            (shell.wanted_active.empty() ? "the system's toolkit" : "CUDA " + shell.wanted_active) +
            " applies here (a later line of " + install.rc_file +
            " may reset the prompt hook, or this runs from a script)");
    f.fix = {hook_env_line(shell),
             "# and keep '" + install.line + "' the last line of " + install.rc_file};
    return f;
  }
  conclude(f, CheckStatus::warn,
           "a later line of " + install.rc_file + " overrides the hook: " + shown(shell.nvcc) +
               " comes before " + shown(shell.wanted_nvcc) + " on PATH");
  f.fix = {"# move '" + install.line + "' after the line of " + install.rc_file +
           " that changes PATH"};
  return f;
}

}  // namespace cudaenv::doctor
