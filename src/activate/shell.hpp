#pragma once
// Rendering environment changes as code for bash, zsh and fish. Every value reaches the shell as
// one single-quoted word, so nothing read from a .cudaenv can run as a command.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "activate/activation.hpp"

namespace cudaenv::activate {

enum class Shell { bash, zsh, fish };

std::optional<Shell> parse_shell(std::string_view name);

// `value` as one word the shell reads back unchanged, whatever it contains. Only printable ASCII
// appears raw: control characters and other bytes are escapes ($'\x1b' in bash and zsh, \x1b
// in fish), so the code never carries an escape sequence to a terminal that shows it.
std::string quote(Shell shell, std::string_view value);

// export NAME='value' / unset NAME (bash, zsh); set -gx NAME 'value' / set -e NAME (fish). A name
// that is not a plain variable name ([A-Za-z_][A-Za-z0-9_]*) is left out.
std::string render_changes(Shell shell, const Changes& changes);

// A file the prompt hook watches: the hook asks cudaenv again when `path` is no longer exactly as
// old as `stamp` (a file cudaenv gave the same modification time), or when a `path` recorded
// absent (empty stamp) appears.
struct WatchedFile {
  std::string path;
  std::string stamp;
};

// Sets the hook's watch list, the shell-local variable __cudaenv_watch (path, stamp pairs).
std::string render_watch(Shell shell, const std::vector<WatchedFile>& watch);

struct HookScript {
  std::string name;  // "cudaenv.bash"
  std::string text;
};
// shell/cudaenv.{bash,zsh,fish}, compiled in.
const std::vector<HookScript>& embedded_hook_scripts();

// Where the hook goes for `shell` and the line that installs it: ~/.bashrc and
// `eval "$(cudaenv init bash)"`, ~/.zshrc, ~/.config/fish/config.fish and `cudaenv init fish |
// source`.
struct HookInstall {
  std::string rc_file;
  std::string line;
};
HookInstall hook_install(Shell shell);

// The user's login shell from $SHELL ("/usr/bin/zsh" -> zsh); nullopt for another shell or none.
std::optional<Shell> login_shell(const std::optional<std::string>& shell_variable);

// The hook `cudaenv init SHELL` prints, calling the cudaenv at `binary`.
std::string hook_script(Shell shell, const std::string& binary);

}  // namespace cudaenv::activate
