#!/usr/bin/env bash
# bench/run activate: the cudaenv prompt hook against Debian's direnv hook on an equivalent .envrc,
# inside one running bash (what PROMPT_COMMAND calls, timed with $EPOCHREALTIME): a prompt with
# nothing changed, and entering and leaving a project; then a shim call against a direct exec of
# the same program. Prints medians and ratios. BENCH_QUICK=1: 5 calls per figure (RUNS overrides),
# and without direnv (not installable here) only cudaenv's own figures.
set -euo pipefail
build_dir=$1
cudaenv="$(cd "$build_dir" && pwd)/src/cudaenv"
work="$(cd "$build_dir" && pwd)/bench-activate"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/needs.sh
source "$repo/bench/needs.sh"

have_direnv=1
if ! bench_tool direnv direnv; then
  if [[ "${BENCH_QUICK:-0}" != 1 ]]; then
    echo "bench activate: direnv is needed to compare against (bench/run --quick runs without it)" >&2
    exit 1
  fi
  have_direnv=0
fi

rm -rf "$work" && mkdir -p "$work/home"
export HOME="$work/home" CUDAENV_ROOT="$work/root" XDG_DATA_HOME="$work/home/.local/share"
export XDG_CONFIG_HOME="$work/home/.config" PATH="/usr/local/bin:/usr/bin:/bin"
unset CUDA_HOME CUDA_PATH CUDAToolkit_ROOT CUDACXX LD_LIBRARY_PATH CUDAENV_VERSION CUDAENV_DIFF

# A toolkit installed by cudaenv from a synthetic mirror, with a real small program as its tool.
python3 -c "import sys; sys.path.insert(0, '$repo/tests/cli'); import synthetic_mirror as m; m.toolkit_release('$work/mirror', '12.1.1', '12.1.105')"
if ! "$cudaenv" install 12.1.1 --mirror "file://$work/mirror" >"$work/install.log" 2>&1; then
  cat "$work/install.log" >&2
  echo "bench activate: cudaenv install failed" >&2
  exit 1
fi
prefix="$CUDAENV_ROOT/toolkits/12.1.1"
cp /bin/true "$prefix/bin/cuda-tool"
"$cudaenv" rehash >/dev/null

# The same project twice: a .cudaenv, and an .envrc setting what cudaenv sets.
mkdir -p "$work/a/deep/er/still/deeper" "$work/b/deep/er/still/deeper"
echo 'cuda = "12.1"' > "$work/a/.cudaenv"
cat > "$work/b/.envrc" <<ENVRC
export CUDA_HOME=$prefix CUDA_PATH=$prefix CUDAToolkit_ROOT=$prefix CUDACXX=$prefix/bin/nvcc CUDAENV_ACTIVE=12.1.1
PATH_add $prefix/bin
path_add LD_LIBRARY_PATH $prefix/lib64
ENVRC
[[ $have_direnv -eq 0 ]] || direnv allow "$work/b" 2>/dev/null

runs=${RUNS:-200}
[[ "${BENCH_QUICK:-0}" != 1 ]] || runs=${RUNS:-5}
bash --noprofile --norc -s -- "$cudaenv" "$work" "$runs" "$have_direnv" <<'BENCH'
cudaenv=$1 work=$2 runs=$3 have_direnv=$4
eval "$("$cudaenv" init bash)"
if [[ $have_direnv -eq 1 ]]; then
  eval "$(direnv hook bash)"
  export DIRENV_LOG_FORMAT=
fi

median_us() {  # runs a function `runs` times; prints the median wall time in microseconds
  local fn=$1 i start end
  local -a samples=()
  for ((i = 0; i < runs; i++)); do
    start=${EPOCHREALTIME/./}
    "$fn"
    end=${EPOCHREALTIME/./}
    samples+=($((end - start)))
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
}

cudaenv_prompt() { __cudaenv_hook; }
direnv_prompt() { _direnv_hook; }
deep_a="$work/a/deep/er/still/deeper" deep_b="$work/b/deep/er/still/deeper"
cudaenv_enter() { cd "$deep_a"; __cudaenv_hook; }
cudaenv_leave() { cd /; __cudaenv_hook; }
direnv_enter() { cd "$deep_b"; _direnv_hook; }
direnv_leave() { cd /; _direnv_hook; }
direct_exec() { "$CUDAENV_ROOT/toolkits/12.1.1/bin/cuda-tool"; }
shim_exec() { "$CUDAENV_ROOT/shims/cuda-tool"; }

cd "$deep_a" && __cudaenv_hook
[[ $CUDAENV_ACTIVE == 12.1.1 ]] || { echo "bench activate: the cudaenv hook did not activate" >&2; exit 1; }
c_prompt=$(median_us cudaenv_prompt)
cudaenv_leave
[[ -z ${CUDAENV_ACTIVE:-} ]] || { echo "bench activate: the cudaenv hook did not deactivate" >&2; exit 1; }
enter_leave() { "$1_enter"; "$1_leave"; }
cudaenv_both() { enter_leave cudaenv; }
direnv_both() { enter_leave direnv; }
c_pair=$(median_us cudaenv_both)
if [[ $have_direnv -eq 1 ]]; then
  cd "$deep_b" && _direnv_hook
  [[ $CUDAENV_ACTIVE == 12.1.1 ]] || { echo "bench activate: the direnv hook did not activate" >&2; exit 1; }
  d_prompt=$(median_us direnv_prompt)
  cd / && _direnv_hook
  d_pair=$(median_us direnv_both)
else
  d_prompt=0 d_pair=0
fi

cd "$work/a"
__cudaenv_hook
"$CUDAENV_ROOT/shims/cuda-tool" || { echo "bench activate: the shim did not run its tool" >&2; exit 1; }
direct=$(median_us direct_exec); shim=$(median_us shim_exec)

awk -v cp="$c_prompt" -v dp="$d_prompt" -v cpair="$c_pair" -v dpair="$d_pair" -v direct="$direct" -v shim="$shim" -v runs="$runs" -v hd="$have_direnv" 'BEGIN {
  cp = cp > 0 ? cp : 1; cpair = cpair > 0 ? cpair : 1
  printf "medians of %d calls inside one bash, in ms (what PROMPT_COMMAND runs)\n", runs
  printf "%-52s %9s %9s %9s\n", "", "cudaenv", "direnv", "ratio"
  if (hd) {
    printf "%-52s %9.3f %9.3f %8.1fx\n", "prompt, nothing changed (5 levels deep)", cp / 1000, dp / 1000, dp / cp
    printf "%-52s %9.3f %9.3f %8.1fx\n", "enter then leave a project (per transition)", cpair / 2000, dpair / 2000, dpair / cpair
  } else {
    printf "%-52s %9.3f %9s %9s\n", "prompt, nothing changed (5 levels deep)", cp / 1000, "n/a", "n/a"
    printf "%-52s %9.3f %9s %9s\n", "enter then leave a project (per transition)", cpair / 2000, "n/a", "n/a"
  }
  printf "\nshim vs direct exec of the same program (/bin/true as a toolkit tool), from bash:\n"
  printf "%-52s %9.3f ms\n", "direct exec", direct / 1000
  printf "%-52s %9.3f ms\n", "through $CUDAENV_ROOT/shims", shim / 1000
  printf "%-52s %9.3f ms  (target: under 1 ms)\n", "shim overhead", (shim - direct) / 1000
  if (hd) {
    printf "\ntargets: prompt ratio >= 10x: %s; enter/leave ratio >= 10x: %s; shim overhead < 1 ms: %s\n",
      (dp / cp >= 10 ? "met" : "MISSED"), (dpair / cpair >= 10 ? "met" : "MISSED"), ((shim - direct) < 1000 ? "met" : "MISSED")
  } else {
    printf "\ntargets: prompt and enter/leave ratios not measured (no direnv); shim overhead < 1 ms: %s\n",
      ((shim - direct) < 1000 ? "met" : "MISSED")
  }
}'
BENCH
