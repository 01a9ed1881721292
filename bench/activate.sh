#!/usr/bin/env bash
# bench/run activate: the cudaenv prompt hook against Debian's direnv hook on an equivalent .envrc,
# inside one running bash (what PROMPT_COMMAND calls, timed with $EPOCHREALTIME): a prompt with
# nothing changed, and entering and leaving a project; then a shim call against a direct exec of
# the same program. Beside them the floors: a bash builtin, one exec of /bin/true, and one extra
# exec of a static no-op program that execs the tool (what a shim can cost at the least). Prints
# medians and ratios against the goals of docs/benchmarks.md. BENCH_QUICK=1: 5 calls per figure
# (RUNS overrides), and without direnv (not installable here) only cudaenv's own figures. mise is
# compared when a `mise` is on PATH (its npm package or release binary; neither Debian nor PyPI
# has it).
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

# The shim's floor: a static program that does nothing but exec the tool, as a shim at its least
# would. Built here from a few lines of C (static: no dynamic loader, like the shipped shim).
trampoline="$work/trampoline"
printf '%s\n' '#include <unistd.h>' \
  'int main(int argc, char** argv) { (void)argc; execv(argv[1], argv + 1); return 127; }' \
  >"$work/trampoline.c"
if ! cc -O2 -static -o "$trampoline" "$work/trampoline.c" 2>"$work/trampoline.log"; then
  echo "bench activate: no static C toolchain here; the static-exec floor is left out" >&2
  trampoline=""
fi

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
bash --noprofile --norc -s -- "$cudaenv" "$work" "$runs" "$have_direnv" "$trampoline" <<'BENCH'
cudaenv=$1 work=$2 runs=$3 have_direnv=$4 trampoline=$5
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
trampoline_exec() { "$trampoline" "$CUDAENV_ROOT/toolkits/12.1.1/bin/cuda-tool"; }
builtin_call() { :; }
true_exec() { /bin/true; }

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
builtin=$(median_us builtin_call); one_exec=$(median_us true_exec)
if [[ -n $trampoline ]]; then
  "$trampoline" "$CUDAENV_ROOT/toolkits/12.1.1/bin/cuda-tool" || { echo "bench activate: the trampoline did not run" >&2; exit 1; }
  floor=$(median_us trampoline_exec)
else
  floor=0
fi

awk -v cp="$c_prompt" -v dp="$d_prompt" -v cpair="$c_pair" -v dpair="$d_pair" -v direct="$direct" -v shim="$shim" \
    -v runs="$runs" -v hd="$have_direnv" -v builtin="$builtin" -v one="$one_exec" -v floor="$floor" 'BEGIN {
  cp = cp > 0 ? cp : 1; cpair = cpair > 0 ? cpair : 1; one = one > 0 ? one : 1
  printf "medians of %d calls inside one bash, in ms (what PROMPT_COMMAND runs)\n", runs
  printf "%-52s %9s %9s %9s\n", "", "cudaenv", "direnv", "ratio"
  if (hd) {
    printf "%-52s %9.3f %9.3f %8.1fx\n", "prompt, nothing changed (5 levels deep)", cp / 1000, dp / 1000, dp / cp
    printf "%-52s %9.3f %9.3f %8.1fx\n", "enter then leave a project (per transition)", cpair / 2000, dpair / 2000, dpair / cpair
  } else {
    printf "%-52s %9.3f %9s %9s\n", "prompt, nothing changed (5 levels deep)", cp / 1000, "n/a", "n/a"
    printf "%-52s %9.3f %9s %9s\n", "enter then leave a project (per transition)", cpair / 2000, "n/a", "n/a"
  }
  printf "\nfloors, from the same bash:\n"
  printf "%-52s %9.3f ms\n", "a builtin (:)", builtin / 1000
  printf "%-52s %9.3f ms\n", "one exec of /bin/true", one / 1000
  printf "\nshim vs direct exec of the same program (/bin/true as a toolkit tool), from bash:\n"
  printf "%-52s %9.3f ms\n", "direct exec", direct / 1000
  printf "%-52s %9.3f ms\n", "through $CUDAENV_ROOT/shims", shim / 1000
  printf "%-52s %9.3f ms\n", "shim overhead", (shim - direct) / 1000
  extra = floor - direct
  if (floor > 0 && extra > 0) {
    printf "%-52s %9.3f ms\n", "a static no-op exec in front (the floor)", extra / 1000
    printf "%-52s %9.2fx\n", "shim overhead / floor", (shim - direct) / extra
  }
  printf "\ngoals (docs/benchmarks.md): "
  if (hd) printf "prompt >= 30x below direnv: %s; ", (dp / cp >= 30 ? "met" : "MISSED")
  printf "enter/leave <= 1.5x one exec: %s", (cpair / 2 <= 1.5 * one ? "met" : "MISSED")
  if (floor > 0 && extra > 0) printf "; shim overhead <= 1.2x the floor: %s", ((shim - direct) <= 1.2 * extra ? "met" : "MISSED")
  printf "\n"
}'
BENCH
