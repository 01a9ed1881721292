# cudaenv's prompt hook for zsh. In ~/.zshrc:  eval "$(cudaenv init zsh)"
# Before each prompt and on each directory change it checks, with shell builtins only, whether the
# nearest .cudaenv, one of the variables that select a version, or a file cudaenv asked it to watch
# has changed, and only then runs `hook-env` (answered by the small cudaenv-shim program when it is
# installed beside cudaenv, else by cudaenv itself), whose output sets the variables as quoted data.
typeset -g __cudaenv_bin=@CUDAENV_BIN@
typeset -ga __cudaenv_watch
# The variables that select a version, as one expression (a constant of this script): the update
# evaluates it, and the compiled check compares it with what the update saw.
typeset -g __cudaenv_selecting='${CUDAENV_VERSION-}|${CUDAENV_ROOT-}|${XDG_DATA_HOME-}|${XDG_CONFIG_HOME-}|${HOME-}'

__cudaenv_changed() {
  emulate -L zsh
  local i file stamp
  for ((i = 1; i < ${#__cudaenv_watch}; i += 2)); do
    file=${__cudaenv_watch[i]} stamp=${__cudaenv_watch[i + 1]}
    if [[ -z $stamp ]]; then
      [[ -e $file ]] && return 0
    elif [[ ! -e $file || ! -e $stamp || $file -nt $stamp || $file -ot $stamp ]]; then
      return 0
    fi
  done
  return 1
}

# Rewrites __cudaenv_fresh as one [[ ]] that is true while nothing it depends on changed: the same
# directory and variables, the .cudaenv the walk found still there and none in a directory it
# passed, every watched file as stamped. A prompt then costs one function call and a stat per
# file, no loop. Every value is single-quoted by (qq), so a directory name is data, never code.
__cudaenv_compile() {
  emulate -L zsh
  local vars=$1 found=$2 test i file stamp
  shift 2
  test="\$PWD == ${(qq)PWD}"
  test+=" && \"$__cudaenv_selecting\" == ${(qq)vars}"
  test+=" && \${__cudaenv_key-} == ${(qq)__cudaenv_key-}"
  if [[ -n $found ]]; then
    test+=" && -e ${(qq)found}"
  fi
  for file in "$@"; do
    test+=" && ! -e ${(qq)file}"
  done
  for ((i = 1; i < ${#__cudaenv_watch}; i += 2)); do
    file=${(qq)__cudaenv_watch[i]}
    if [[ -z ${__cudaenv_watch[i + 1]} ]]; then
      test+=" && ! -e $file"
    else
      # (zsh's -nt and -ot are false when either file is missing, so both are tested first)
      stamp=${(qq)__cudaenv_watch[i + 1]}
      test+=" && -e $file && -e $stamp && ! $file -nt $stamp && ! $file -ot $stamp"
    fi
  done
  eval "__cudaenv_fresh() { [[ $test ]]; }"
}

__cudaenv_fresh() { return 1; }

__cudaenv_update() {
  emulate -L zsh
  local dir=$PWD found=
  local -a misses
  while true; do
    if [[ -e $dir/.cudaenv ]]; then
      found=$dir/.cudaenv
      break
    fi
    misses+=("$dir/.cudaenv")
    [[ -z $dir || $dir == / ]] && break
    dir=${dir%/*}
  done
  local vars
  eval "vars=\"$__cudaenv_selecting\""
  local key="$found|$vars"
  if [[ $key != "${__cudaenv_key-}" ]] || __cudaenv_changed; then
    eval "$("$__cudaenv_bin" hook-env --shell zsh)"
    typeset -g __cudaenv_key=$key
  fi
  __cudaenv_compile "$vars" "$found" "${misses[@]}"
}

__cudaenv_hook() {
  emulate -L zsh
  __cudaenv_fresh || __cudaenv_update
}

autoload -Uz add-zsh-hook
add-zsh-hook precmd __cudaenv_hook
add-zsh-hook chpwd __cudaenv_hook
