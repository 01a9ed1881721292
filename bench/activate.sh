#!/usr/bin/env bash
# bench/run activate: the cudaenv prompt hook against Debian's direnv hook on an equivalent .envrc,
# inside one running bash (what PROMPT_COMMAND calls, timed with $EPOCHREALTIME): a prompt with
# nothing changed, and entering and leaving a project; then a shim call against a direct exec of
# the same program. Prints medians and ratios.
set -euo pipefail
build_dir=$1
cudaenv="$(cd "$build_dir" && pwd)/src/cudaenv"
work="$(cd "$build_dir" && pwd)/bench-activate"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if ! command -v direnv >/dev/null; then
  echo "bench activate: installing direnv (Debian's package) to compare against" >&2
  if [[ $(id -u) -eq 0 ]]; then apt-get install -y -qq direnv >/dev/null; else sudo apt-get install -y -qq direnv >/dev/null; fi
fi

rm -rf "$work" && mkdir -p "$work/home"
export HOME="$work/home" CUDAENV_ROOT="$work/root" XDG_DATA_HOME="$work/home/.local/share"
export XDG_CONFIG_HOME="$work/home/.config" PATH="/usr/local/bin:/usr/bin:/bin"
unset CUDA_HOME CUDA_PATH CUDAToolkit_ROOT CUDACXX LD_LIBRARY_PATH CUDAENV_VERSION CUDAENV_DIFF

# A toolkit installed by cudaenv from a synthetic mirror, with a real small program as its tool.
python3 -c "import sys; sys.path.insert(0, '$repo/tests/cli'); import synthetic_mirror as m; m.toolkit_release('$work/mirror', '12.1.1', '12.1.105')"
"$cudaenv" install 12.1.1 --mirror "file://$work/mirror" >/dev/null 2>&1
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
direnv allow "$work/b" 2>/dev/null

runs=${RUNS:-200}
bash --noprofile --norc -s -- "$cudaenv" "$work" "$runs" <<'BENCH'
cudaenv=$1 work=$2 runs=$3
eval "$("$cudaenv" init bash)"
eval "$(direnv hook bash)"
export DIRENV_LOG_FORMAT=

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
cd "$deep_b" && _direnv_hook
[[ $CUDAENV_ACTIVE == 12.1.1 ]] || { echo "bench activate: the direnv hook did not activate" >&2; exit 1; }
d_prompt=$(median_us direnv_prompt)
cd / && _direnv_hook

enter_leave() { "$1_enter"; "$1_leave"; }
cudaenv_both() { enter_leave cudaenv; }
direnv_both() { enter_leave direnv; }
c_pair=$(median_us cudaenv_both); d_pair=$(median_us direnv_both)

cd "$work/a"
__cudaenv_hook
direct=$(median_us direct_exec); shim=$(median_us shim_exec)

awk -v cp="$c_prompt" -v dp="$d_prompt" -v cpair="$c_pair" -v dpair="$d_pair" -v direct="$direct" -v shim="$shim" -v runs="$runs" 'BEGIN {
  printf "medians of %d calls inside one bash, in ms (what PROMPT_COMMAND runs)\n", runs
  printf "%-52s %9s %9s %9s\n", "", "cudaenv", "direnv", "ratio"
  printf "%-52s %9.3f %9.3f %8.1fx\n", "prompt, nothing changed (5 levels deep)", cp / 1000, dp / 1000, dp / cp
  printf "%-52s %9.3f %9.3f %8.1fx\n", "enter then leave a project (per transition)", cpair / 2000, dpair / 2000, dpair / cpair
  printf "\nshim vs direct exec of the same program (/bin/true as a toolkit tool), from bash:\n"
  printf "%-52s %9.3f ms\n", "direct exec", direct / 1000
  printf "%-52s %9.3f ms\n", "through $CUDAENV_ROOT/shims", shim / 1000
  printf "%-52s %9.3f ms  (target: under 1 ms)\n", "shim overhead", (shim - direct) / 1000
  printf "\ntargets: prompt ratio >= 10x: %s; enter/leave ratio >= 10x: %s; shim overhead < 1 ms: %s\n",
    (dp / cp >= 10 ? "met" : "MISSED"), (dpair / cpair >= 10 ? "met" : "MISSED"), ((shim - direct) < 1000 ? "met" : "MISSED")
}'
BENCH
