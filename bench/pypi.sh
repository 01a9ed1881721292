#!/usr/bin/env bash
# bench/run pypi: `cudaenv install --source pypi` from a local PEP 503 index against what a user
# does by hand with the standard tools: `pip download --no-deps` of the same wheels from the same
# index, then `unzip` of each. The index serves NVIDIA's real CUDA 13.0.2 wheels (nvcc, nvvm,
# runtime, crt, cccl: the "minimal" preset) from the end-to-end tests' download cache
# ($CUDAENV_TEST_CACHE/wheels, filled by tests/cli/test_e2e_install.py), with the cuda-toolkit
# metapackage that pins them. With BENCH_QUICK=1, or without those wheels, small synthetic wheels
# instead (the figures then mean nothing) and one run each.
set -euo pipefail
shopt -s inherit_errexit
build_dir=$1
quick=${BENCH_QUICK:-0}
cudaenv="$build_dir/src/cudaenv"
work="$build_dir/bench-pypi"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="${CUDAENV_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudaenv-ci/downloads}"
mkdir -p "$work"
if ! python3 -m pip --version >/dev/null 2>&1 || ! command -v unzip >/dev/null; then
  echo "bench pypi: pip or unzip is missing; skipped"
  exit 0
fi

wheels="$work/wheels"
runs=3
real=$(ls "$cache"/wheels/nvidia_*-13.0.*.whl 2>/dev/null | wc -l)
if [[ $quick -eq 1 || $real -lt 5 ]]; then
  runs=1
  wheels="$work/wheels-quick"
fi
if [[ ! -d "$wheels" ]]; then
  mkdir -p "$wheels"
  python3 - "$repo/tests/cli" "$wheels" "$cache/wheels" "$quick" "$real" <<'PY'
import os, shutil, sys
sys.path.insert(0, sys.argv[1])
import synthetic_wheels as w
wheels, real_dir, quick, real = sys.argv[2], sys.argv[3], sys.argv[4] == "1", int(sys.argv[5])
pins = {"nvidia-cuda-nvcc": "13.0.88", "nvidia-cuda-runtime": "13.0.96", "nvidia-cuda-crt": "13.0.88",
        "nvidia-nvvm": "13.0.88", "nvidia-cuda-cccl": "13.0.85"}
if quick or real < 5:
    w.cuda13_release(wheels, "13.0.2", {**pins, "nvidia-cublas": "13.1.0.3"})
else:
    for name in os.listdir(real_dir):
        if any(name.startswith(p.replace("-", "_") + "-" + v + "-") for p, v in pins.items()):
            os.link(os.path.join(real_dir, name), os.path.join(wheels, name))
    w.metapackage(wheels, "13.0.2", pins)
PY
fi
mapfile -t pins < <(cd "$wheels" && ls nvidia_*.whl | sed -E 's/^([^-]+)-([^-]+)-.*/\1==\2/')

control="$work/control.json"
echo '{}' > "$control"
coproc server { exec python3 "$repo/tests/cli/pypi_index.py" "$wheels" "$control"; }
trap 'kill $server_PID 2>/dev/null || true' EXIT
read -r port <&"${server[0]}"
index="http://127.0.0.1:$port/simple"
bytes=$(cat "$wheels"/nvidia_*.whl | wc -c)

now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

by_hand() {  # pip download of the wheels, then unzip of each
  local dir=$1
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --python-version 3.12 --index-url "$index" -d "$dir/wheels" "${pins[@]}"
  for wheel in "$dir"/wheels/*.whl; do unzip -q -o "$wheel" -d "$dir/tree"; done
}

with_cudaenv() {
  local dir=$1
  CUDAENV_ROOT="$dir/root" "$cudaenv" install 13.0.2 --source pypi --components minimal \
    --index-url "$index" --jobs "$(nproc)" > /dev/null
}

time_of() {  # command: median ms of $runs cold runs, each in an empty directory
  local samples=() i start end dir
  for ((i = 0; i < runs; i++)); do
    dir=$(mktemp -d "$work/run.XXXXXX")
    start=$(now)
    "$@" "$dir"
    end=$(now)
    samples+=("$(ms "$start" "$end")")
    rm -rf "$dir"
  done
  printf '%s\n' "${samples[@]}" | median
}

echo "== install from a package index (${#pins[@]} wheels, $((bytes / 1000000)) MB; median of $runs)"
hand=$(time_of by_hand)
ours=$(time_of with_cudaenv)
printf '  %-52s %8.2f s\n' "pip download --no-deps + unzip, one after another" "$(echo "$hand / 1000" | bc -l)"
printf '  %-52s %8.2f s\n' "cudaenv install --source pypi --components minimal" "$(echo "$ours / 1000" | bc -l)"
printf '  ratio cudaenv / (pip download + unzip) = %.2f\n' "$(echo "$ours / $hand" | bc -l)"
