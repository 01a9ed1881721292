# shellcheck shell=bash
# Sourced by the benchmarks: the tools a benchmark compares against (direnv, curl, xz), installed
# from Debian's packages when missing and possible, else reported so the comparison is skipped.
# BENCH_INSTALL=0 never installs anything.

# bench_tool COMMAND PACKAGE: succeeds when COMMAND is (or has just been made) available.
bench_tool() {
  local command=$1 package=$2
  command -v "$command" >/dev/null && return 0
  if [[ "${BENCH_INSTALL:-1}" != 0 ]] && command -v apt-get >/dev/null; then
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    echo "bench: installing $package (Debian's package) to compare against" >&2
    if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "$package" >/dev/null 2>&1; then
      # The package lists may simply be missing (a fresh container): refresh them once.
      "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "$package" >/dev/null 2>&1 || true
    fi
  fi
  command -v "$command" >/dev/null && return 0
  echo "bench: $command is not installed and could not be installed (package $package)" >&2
  return 1
}
