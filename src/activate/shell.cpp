#include "activate/shell.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace cudaenv::activate {

namespace {

// Bytes that must not appear raw in the code the hook prints: controls (a newline, ESC) would
// reach a terminal whenever the output is shown, and bytes past ASCII may be C1 controls (0x9b
// is CSI) or invalid UTF-8. They are written as escapes the shell turns back into the same bytes.
bool is_plain_byte(unsigned char c) { return c >= 0x20 && c < 0x7f; }

bool all_plain(std::string_view value) {
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return is_plain_byte(static_cast<unsigned char>(c)); });
}

std::string hex_escape(const char* prefix, unsigned char c) {
  static constexpr char digits[] = "0123456789abcdef";
  return std::string(prefix) + digits[c >> 4] + digits[c & 0xf];
}

std::string single_quoted_posix(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  out += '\'';
  for (auto quote = value.find('\''); quote != std::string_view::npos; quote = value.find('\'')) {
    out.append(value.substr(0, quote)).append("'\\''");
    value.remove_prefix(quote + 1);
  }
  out.append(value);
  out += '\'';
  return out;
}

// bash's and zsh's $'…': \xHH gives back any byte, \\ and \' the two special characters.
std::string ansi_c_quoted(std::string_view value) {
  std::string out = "$'";
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += c;
    } else if (is_plain_byte(byte)) {
      out += c;
    } else {
      out += hex_escape("\\x", byte);
    }
  }
  return out + "'";
}

// In fish's single quotes only \\ and \' are special; other bytes are unquoted escapes joined to
// the quoted runs ('a'\x1b'b'): \xHH below 0x80, \XHH for a raw byte above.
std::string single_quoted_fish(std::string_view value) {
  std::string out;
  bool quoted = false;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (is_plain_byte(byte)) {
      if (!quoted) out += '\'';
      quoted = true;
      if (c == '\'' || c == '\\') out += '\\';
      out += c;
      continue;
    }
    if (quoted) out += '\'';
    quoted = false;
    out += hex_escape(byte < 0x80 ? "\\x" : "\\X", byte);
  }
  if (quoted) out += '\'';
  return out.empty() ? "''" : out;
}

std::string set_statement(Shell shell, const std::string& name, const std::string& value) {
  if (shell != Shell::fish) return "export " + name + "=" + quote(shell, value) + ";\n";
  // fish keeps PATH-like variables as lists and splits them on ':' when they are set.
  return "set -gx " + name + " " + quote(shell, value) + ";\n";
}

std::string unset_statement(Shell shell, const std::string& name) {
  return shell == Shell::fish ? "set -e " + name + ";\n" : "unset " + name + ";\n";
}

bool is_variable_name(std::string_view name) {
  const auto letter = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

const std::string& script_named(const std::string& name) {
  static const std::string none;
  for (const auto& script : embedded_hook_scripts()) {
    if (script.name == name) return script.text;
  }
  return none;
}

}  // namespace

std::optional<Shell> parse_shell(std::string_view name) {
  if (name == "bash") return Shell::bash;
  if (name == "zsh") return Shell::zsh;
  if (name == "fish") return Shell::fish;
  return std::nullopt;
}

HookInstall hook_install(Shell shell) {
  switch (shell) {
    case Shell::bash: return {"~/.bashrc", "eval \"$(cudaenv init bash)\""};
    case Shell::zsh: return {"~/.zshrc", "eval \"$(cudaenv init zsh)\""};
    case Shell::fish: return {"~/.config/fish/config.fish", "cudaenv init fish | source"};
  }
  return {"~/.bashrc", "eval \"$(cudaenv init bash)\""};
}

std::optional<Shell> login_shell(const std::optional<std::string>& shell_variable) {
  if (!shell_variable) return std::nullopt;
  const auto slash = shell_variable->rfind('/');
  return parse_shell(slash == std::string::npos ? *shell_variable
                                                : shell_variable->substr(slash + 1));
}

std::string quote(Shell shell, std::string_view value) {
  if (shell == Shell::fish) return single_quoted_fish(value);
  return all_plain(value) ? single_quoted_posix(value) : ansi_c_quoted(value);
}

std::string render_changes(Shell shell, const Changes& changes) {
  std::string out;
  for (const auto& [name, value] : changes) {
    if (!is_variable_name(name)) continue;  // never spliced into code: it is not quoted
    out += value ? set_statement(shell, name, *value) : unset_statement(shell, name);
  }
  return out;
}

std::string render_watch(Shell shell, const std::vector<WatchedFile>& watch) {
  std::string words;
  for (const auto& file : watch) {
    words += " " + quote(shell, file.path) + " " + quote(shell, file.stamp);
  }
  if (shell == Shell::fish) return "set -g __cudaenv_watch" + words + ";\n";
  return "__cudaenv_watch=(" + (words.empty() ? words : words.substr(1)) + ");\n";
}

std::string hook_script(Shell shell, const std::string& binary) {
  const char* name = shell == Shell::bash  ? "cudaenv.bash"
                     : shell == Shell::zsh ? "cudaenv.zsh"
                                           : "cudaenv.fish";
  std::string script = script_named(name);
  const std::string placeholder = "@CUDAENV_BIN@";
  const auto quoted = quote(shell, binary);
  for (auto at = script.find(placeholder); at != std::string::npos;
       at = script.find(placeholder, at + quoted.size()))
    script.replace(at, placeholder.size(), quoted);
  return script;
}

}  // namespace cudaenv::activate
