# cudaenv's prompt hook for bash. In ~/.bashrc:  eval "$(cudaenv init bash)"
# Before each prompt it checks, with shell builtins only, whether the nearest .cudaenv, one of the
# variables that select a version, or a file cudaenv asked it to watch has changed, and only then
# runs `hook-env` (answered by the small cudaenv-shim program when it is installed beside cudaenv,
# else by cudaenv itself), whose output sets the variables as quoted data.
__cudaenv_bin=@CUDAENV_BIN@

# The variables that select a version, as one expression (a constant of this script): the update
# evaluates it, and the compiled check compares it with what the update saw.
__cudaenv_selecting='${CUDAENV_VERSION-}|${CUDAENV_ROOT-}|${XDG_DATA_HOME-}|${XDG_CONFIG_HOME-}|${HOME-}'

__cudaenv_changed() {
  local i file stamp
  for ((i = 0; i + 1 < ${#__cudaenv_watch[@]}; i += 2)); do
    file=${__cudaenv_watch[i]} stamp=${__cudaenv_watch[i + 1]}
    if [[ -z $stamp ]]; then
      [[ -e $file ]] && return 0
    elif [[ $file -nt $stamp || $file -ot $stamp ]]; then
      return 0
    fi
  done
  return 1
}

# Rewrites __cudaenv_fresh as one [[ ]] that is true while nothing it depends on changed: the same
# directory and variables, the .cudaenv the walk found still there and none in a directory it
# passed, every watched file as stamped. A prompt then costs one function call and a stat per
# file, no loop. Every value is quoted with %q, so a directory name is data, never code.
__cudaenv_compile() {
  local vars=$1 found=$2 test q i file stamp
  shift 2
  printf -v q %q "$PWD"
  test="\$PWD == $q"
  printf -v q %q "$vars"
  test+=" && \"$__cudaenv_selecting\" == $q"
  printf -v q %q "${__cudaenv_key-}"
  test+=" && \${__cudaenv_key-} == $q"
  if [[ -n $found ]]; then
    printf -v q %q "$found"
    test+=" && -e $q"
  fi
  for file in "$@"; do
    printf -v q %q "$file"
    test+=" && ! -e $q"
  done
  for ((i = 0; i + 1 < ${#__cudaenv_watch[@]}; i += 2)); do
    printf -v file %q "${__cudaenv_watch[i]}"
    if [[ -z ${__cudaenv_watch[i + 1]} ]]; then
      test+=" && ! -e $file"
    else
      printf -v stamp %q "${__cudaenv_watch[i + 1]}"
      test+=" && ! $file -nt $stamp && ! $file -ot $stamp"
    fi
  done
  eval "__cudaenv_fresh() { [[ $test ]]; }"
}

__cudaenv_fresh() { return 1; }

__cudaenv_update() {
  local dir=$PWD found= misses=() vars
  while :; do
    if [[ -e $dir/.cudaenv ]]; then
      found=$dir/.cudaenv
      break
    fi
    misses+=("$dir/.cudaenv")
    [[ -z $dir || $dir == / ]] && break
    dir=${dir%/*}
  done
  eval "vars=\"$__cudaenv_selecting\""
  local key="$found|$vars"
  if [[ $key != "${__cudaenv_key-}" ]] || __cudaenv_changed; then
    eval "$("$__cudaenv_bin" hook-env --shell bash)"
    __cudaenv_key=$key
  fi
  __cudaenv_compile "$vars" "$found" "${misses[@]}"
}

__cudaenv_hook() {
  local previous_status=$?
  __cudaenv_fresh || __cudaenv_update
  return $previous_status
}

if [[ ${PROMPT_COMMAND[*]-} != *__cudaenv_hook* ]]; then
  PROMPT_COMMAND="__cudaenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
fi
