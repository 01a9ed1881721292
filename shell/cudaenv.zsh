# cudaenv's prompt hook for zsh. In ~/.zshrc:  eval "$(cudaenv init zsh)"
# Before each prompt and on each directory change it checks, with shell builtins only, whether the
# nearest .cudaenv, one of the variables that select a version, or a file cudaenv asked it to watch
# has changed, and only then runs `hook-env` (answered by the small cudaenv-shim program when it is
# installed beside cudaenv, else by cudaenv itself), whose output sets the variables as quoted data.
typeset -g __cudaenv_bin=@CUDAENV_BIN@
typeset -ga __cudaenv_watch

__cudaenv_changed() {
  emulate -L zsh
  local i file stamp
  for ((i = 1; i < ${#__cudaenv_watch}; i += 2)); do
    file=${__cudaenv_watch[i]} stamp=${__cudaenv_watch[i + 1]}
    if [[ -z $stamp ]]; then
      [[ -e $file ]] && return 0
    elif [[ $file -nt $stamp || $file -ot $stamp ]]; then
      return 0
    fi
  done
  return 1
}

__cudaenv_hook() {
  emulate -L zsh
  local dir=$PWD found=
  while true; do
    if [[ -e $dir/.cudaenv ]]; then
      found=$dir/.cudaenv
      break
    fi
    [[ -z $dir || $dir == / ]] && break
    dir=${dir%/*}
  done
  local key="$found|${CUDAENV_VERSION-}|${CUDAENV_ROOT-}|${XDG_DATA_HOME-}|${XDG_CONFIG_HOME-}|${HOME-}"
  if [[ $key != "${__cudaenv_key-}" ]] || __cudaenv_changed; then
    eval "$("$__cudaenv_bin" hook-env --shell zsh)"
    typeset -g __cudaenv_key=$key
  fi
}

autoload -Uz add-zsh-hook
add-zsh-hook precmd __cudaenv_hook
add-zsh-hook chpwd __cudaenv_hook
