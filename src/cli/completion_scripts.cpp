// The three completion scripts. Each is a per-shell driver (fixed text below: walk the words
// typed so far through the command table, then offer subcommands, flags or a value) and a
// `spec` function generated from the table: for each command path, its subcommands, its flags,
// the flags that take a value (with what completes it) and its arguments.

#include <string_view>

#include "cli/completion.hpp"
#include "core/text.hpp"

namespace cudaenv::cli {

namespace {

std::string one_line(std::string text) {
  for (auto& c : text) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  return text;
}

// Fish reads \\ and \' inside single quotes; everything else is literal.
std::string fish_quote(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

std::string names_field(const std::vector<FlagEntry>& flags) {
  std::vector<std::string> names;
  for (const auto& flag : flags) names.insert(names.end(), flag.names.begin(), flag.names.end());
  return text::join(names, " ");
}

// "--mirror= --cudnn=cudnn": the flags that take a value, each with what completes it.
std::string valued_field(const std::vector<FlagEntry>& flags) {
  std::vector<std::string> valued;
  for (const auto& flag : flags) {
    if (flag.value.empty()) continue;
    for (const auto& name : flag.names) valued.push_back(name + "=" + flag.kind);
  }
  return text::join(valued, " ");
}

// "versions -" : what completes each argument; "-" nothing, a trailing "+" repeats.
std::string args_field(const CommandEntry& command) {
  std::vector<std::string> kinds;
  for (const auto& p : command.positionals)
    kinds.push_back((p.kind.empty() ? "-" : p.kind) + (p.repeats ? "+" : ""));
  return text::join(kinds, " ");
}

constexpr std::string_view bash_driver = R"BASH(
_cudaenv_values() {
  local kind=$1 cur=$2 words='' subs flags valued args
  case $kind in
    versions | installed | cudnn) words=$(command cudaenv __complete "$kind" 2>/dev/null) ;;
    words:*) words=${kind#words:} && words=${words//,/ } ;;
    commands) _cudaenv_spec '' && words=$subs ;;
    directories) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur") && return ;;
    files) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") && return ;;
    programs) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -c -- "$cur") && return ;;
    *) return ;;
  esac
  mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$words" -- "$cur")
}

_cudaenv() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmdpath='' word entry kind='' flag='' i npos=0 dashes=-1
  local subs flags valued args
  local -a kinds
  COMPREPLY=()
  _cudaenv_spec ''
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    [[ $word == = ]] && continue
    if [[ -n $flag ]]; then flag='' && continue; fi
    if [[ $word == -- ]]; then dashes=$i && break; fi
    if [[ $word == -* ]]; then
      for entry in $valued; do [[ $word == "${entry%%=*}" ]] && flag=$word; done
      continue
    fi
    if [[ " $subs " == *" $word "* ]]; then
      cmdpath=${cmdpath:+$cmdpath }$word && npos=0 && _cudaenv_spec "$cmdpath" && continue
    fi
    npos=$((npos + 1))
  done
  if ((dashes >= 0)); then
    if ((COMP_CWORD == dashes + 1)); then kind=programs; else kind=files; fi
  elif [[ -n $flag ]]; then
    for entry in $valued; do [[ $flag == "${entry%%=*}" ]] && kind=${entry#*=}; done
  elif [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur") && return 0
  else
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
    read -r -a kinds <<<"$args"
    if ((npos < ${#kinds[@]})); then
      kind=${kinds[npos]}
    elif ((${#kinds[@]} > 0)) && [[ ${kinds[-1]} == *+ ]]; then
      kind=${kinds[-1]}
    fi
    kind=${kind%+}
  fi
  _cudaenv_values "$kind" "$cur"
  return 0
}

complete -F _cudaenv cudaenv
)BASH";

constexpr std::string_view zsh_driver = R"ZSH(
_cudaenv_values() {
  local -a subs descs flags valued args
  case $1 in
    versions|installed|cudnn)
      compadd -- ${(f)"$(command cudaenv __complete $1 2>/dev/null)"} ;;
    words:*) compadd -- ${(s:,:)${1#words:}} ;;
    commands) _cudaenv_spec '' && _describe -t commands 'cudaenv command' descs ;;
    directories) _files -/ ;;
    files) _files ;;
    programs) _command_names -e ;;
  esac
}

_cudaenv() {
  local -a subs descs flags valued args
  local cmdpath='' word entry kind='' flag='' cur=${words[CURRENT]}
  local -i i npos=1 dashes=0
  _cudaenv_spec ''
  for ((i = 2; i < CURRENT; i++)); do
    word=${words[i]}
    if [[ -n $flag ]]; then flag='' && continue; fi
    if [[ $word == -- ]]; then dashes=$i && break; fi
    if [[ $word == -* ]]; then
      for entry in $valued; do [[ $word == "${entry%%=*}" ]] && flag=$word; done
      continue
    fi
    if (( ${subs[(Ie)$word]} )); then
      cmdpath=${cmdpath:+$cmdpath }$word && npos=1 && _cudaenv_spec "$cmdpath" && continue
    fi
    npos+=1
  done
  if (( dashes )); then
    if (( CURRENT == dashes + 1 )); then kind=programs; else kind=files; fi
  elif [[ -n $flag ]]; then
    for entry in $valued; do [[ $flag == "${entry%%=*}" ]] && kind=${entry#*=}; done
  elif [[ $cur == -* ]]; then
    compadd -- $flags && return 0
  else
    (( ${#descs} )) && _describe -t commands 'cudaenv command' descs
    if (( npos <= ${#args} )); then
      kind=${args[npos]}
    elif (( ${#args} )) && [[ ${args[-1]} == *+ ]]; then
      kind=${args[-1]}
    fi
    kind=${kind%+}
  fi
  _cudaenv_values $kind
  return 0
}

if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  _cudaenv "$@"
else
  compdef _cudaenv cudaenv
fi
)ZSH";

constexpr std::string_view fish_driver = R"FISH(
function __cudaenv_field --argument-names field
    for line in $argv[2..-1]
        set -l parts (string split \t -- $line)
        test "$parts[1]" = $field; and echo $parts[2]
    end
end

function __cudaenv_values --argument-names kind cur
    switch $kind
        case versions installed cudnn
            command cudaenv __complete $kind 2>/dev/null
        case 'words:*'
            string split , -- (string replace words: '' -- $kind)
        case commands
            for line in (__cudaenv_spec '')
                set -l parts (string split \t -- $line)
                test "$parts[1]" = sub; and printf '%s\t%s\n' $parts[2] $parts[3]
            end
        case directories
            __fish_complete_directories $cur
        case files
            __fish_complete_path $cur
        case programs
            complete -C "$cur"
    end
end

function __cudaenv_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -e tokens[1]
    set -l cmdpath ''
    set -l spec (__cudaenv_spec '')
    set -l flag ''
    set -l npos 1
    set -l after_dashes -1
    for word in $tokens
        if test $after_dashes -ge 0
            set after_dashes (math $after_dashes + 1)
            continue
        end
        if test -n "$flag"
            set flag ''
            continue
        end
        if test "$word" = --
            set after_dashes 0
            continue
        end
        if string match -q -- '-*' $word
            for entry in (__cudaenv_field valued $spec)
                test (string split -m1 = -- $entry)[1] = $word; and set flag $word
            end
            continue
        end
        if contains -- $word (__cudaenv_field sub $spec)
            set cmdpath (string trim -- "$cmdpath $word")
            set spec (__cudaenv_spec $cmdpath)
            set npos 1
            continue
        end
        set npos (math $npos + 1)
    end
    set -l kind ''
    if test $after_dashes -eq 0
        set kind programs
    else if test $after_dashes -gt 0
        set kind files
    else if test -n "$flag"
        for entry in (__cudaenv_field valued $spec)
            set -l parts (string split -m1 = -- $entry)
            test $parts[1] = $flag; and set kind $parts[2]
        end
    else if string match -q -- '-*' $cur
        for line in $spec
            set -l parts (string split \t -- $line)
            test "$parts[1]" = flag; and printf '%s\t%s\n' $parts[2] $parts[3]
        end
        return 0
    else
        for line in $spec
            set -l parts (string split \t -- $line)
            test "$parts[1]" = sub; and printf '%s\t%s\n' $parts[2] $parts[3]
        end
        set -l kinds (__cudaenv_field arg $spec)
        if test $npos -le (count $kinds)
            set kind $kinds[$npos]
        else if test (count $kinds) -gt 0; and string match -q -- '*+' $kinds[-1]
            set kind $kinds[-1]
        end
        set kind (string replace -r '\+$' '' -- $kind)
    end
    __cudaenv_values "$kind" "$cur"
end

complete -c cudaenv -f -a '(__cudaenv_complete)'
)FISH";

std::string bash_case(const std::vector<CommandEntry>& table, const CommandEntry& command) {
  const auto flags = offered_flags(table, command);
  return "    '" + command.path + "') subs='" + text::join(command.subcommands, " ") + "' flags='" +
         names_field(flags) + "' valued='" + valued_field(flags) + "' args='" +
         args_field(command) + "' ;;\n";
}

// The commands one level below `command`.
std::vector<const CommandEntry*> children(const std::vector<CommandEntry>& table,
                                          const CommandEntry& command) {
  std::vector<const CommandEntry*> found;
  for (const auto& entry : table) {
    const auto cut = entry.path.rfind(' ');
    const auto parent = cut == std::string::npos ? std::string() : entry.path.substr(0, cut);
    if (!entry.path.empty() && parent == command.path) found.push_back(&entry);
  }
  return found;
}

std::string last_word(const std::string& path) { return path.substr(path.rfind(' ') + 1); }

std::string zsh_case(const std::vector<CommandEntry>& table, const CommandEntry& command) {
  const auto flags = offered_flags(table, command);
  std::vector<std::string> described;
  for (const auto* sub : children(table, command))
    described.push_back(text::shell_quote(last_word(sub->path) + ":" + one_line(sub->description)));
  return "    '" + command.path + "')\n      subs=(" + text::join(command.subcommands, " ") +
         ")\n      descs=(" + text::join(described, " ") + ")\n      flags=(" + names_field(flags) +
         ")\n      valued=(" + valued_field(flags) + ")\n      args=(" + args_field(command) +
         ") ;;\n";
}

std::string fish_lines(const std::vector<CommandEntry>& table, const CommandEntry& command) {
  std::string lines;
  const auto line = [&lines](std::initializer_list<std::string> fields) {
    std::vector<std::string> quoted;
    for (const auto& field : fields) quoted.push_back(fish_quote(one_line(field)));
    lines += "            printf '%s\\t%s\\t%s\\n' " + text::join(quoted, " ") + "\n";
  };
  for (const auto* sub : children(table, command))
    line({"sub", last_word(sub->path), sub->description});
  for (const auto& flag : offered_flags(table, command)) {
    for (const auto& name : flag.names) {
      line({"flag", name, flag.description});
      if (!flag.value.empty()) line({"valued", name + "=" + flag.kind, ""});
    }
  }
  for (const auto& p : command.positionals)
    line({"arg", (p.kind.empty() ? "-" : p.kind) + (p.repeats ? "+" : ""), ""});
  return lines;
}

}  // namespace

std::string bash_completion(const std::vector<CommandEntry>& table) {
  std::string script =
      "# bash completion for cudaenv, generated from its command table by "
      "`cudaenv completion bash`.\n# Load it with: source <(cudaenv completion bash)\n\n"
      "_cudaenv_spec() {\n  case \"$1\" in\n";
  for (const auto& command : table) script += bash_case(table, command);
  script += "    *) subs='' flags='' valued='' args='' ;;\n  esac\n}\n";
  return script + std::string(bash_driver);
}

std::string zsh_completion(const std::vector<CommandEntry>& table) {
  std::string script =
      "#compdef cudaenv\n# zsh completion for cudaenv, generated from its command table by "
      "`cudaenv completion zsh`.\n# Install it as _cudaenv in a directory on $fpath, or load it "
      "with: source <(cudaenv completion zsh)\n\n_cudaenv_spec() {\n  case \"$1\" in\n";
  for (const auto& command : table) script += zsh_case(table, command);
  script += "    *) subs=() descs=() flags=() valued=() args=() ;;\n  esac\n}\n";
  return script + std::string(zsh_driver);
}

std::string fish_completion(const std::vector<CommandEntry>& table) {
  std::string script =
      "# fish completion for cudaenv, generated from its command table by "
      "`cudaenv completion fish`.\n# Load it with: cudaenv completion fish | source\n\n"
      "function __cudaenv_spec\n    switch \"$argv[1]\"\n";
  for (const auto& command : table) {
    script += "        case " + fish_quote(command.path) + "\n" + fish_lines(table, command);
  }
  script += "    end\nend\n";
  return script + std::string(fish_driver);
}

}  // namespace cudaenv::cli
