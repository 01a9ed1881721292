#!/usr/bin/env bash
# bench/run pypi: `cudaenv install --source pypi` from a local PEP 503 index against what users
# do otherwise with the same wheels from the same index: uv (`uv pip install --no-deps --target`,
# the fastest installer PyPI users know; uv itself from PyPI, kept in the benchmark's directory)
# and by hand with the standard tools (`pip download --no-deps`, then `unzip` of each). Cold (empty
# caches) and warm (the wheels already cached: a reinstall), and the second-release case: 13.0.3
# after 13.0.2, whose component wheels are the same (the database's [[redist]] rows: same nvcc
# and cudart), with the bytes downloaded and the disk used. The index serves NVIDIA's real CUDA 13.0.2 wheels (nvcc, nvvm,
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
    w.metapackage(wheels, "13.0.3", {**pins, "nvidia-cublas": "13.1.0.3"})
else:
    for name in os.listdir(real_dir):
        if any(name.startswith(p.replace("-", "_") + "-" + v + "-") for p, v in pins.items()):
            os.link(os.path.join(real_dir, name), os.path.join(wheels, name))
    w.metapackage(wheels, "13.0.2", pins)
w.metapackage(wheels, "13.0.3", pins)  # 13.0.3 ships 13.0.2's component versions
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

# Both take the run's directory (time_of passes it); warm_root / warm_uv_cache name warm caches
# to reuse instead of the run's empty ones.
with_cudaenv() {
  local dir=$1
  CUDAENV_ROOT="${warm_root:-$dir/root}" "$cudaenv" install 13.0.2 --source pypi \
    --components minimal --index-url "$index" --jobs "$(nproc)" ${warm_root:+--force} > /dev/null
}

# uv from PyPI, once, into the benchmark's directory; empty when it cannot be had.
uv_bin=""
if [[ ! -x "$work/uv-tool/bin/uv" ]]; then
  python3 -m pip install -q --target "$work/uv-tool/lib" uv >/dev/null 2>&1 || true
  if [[ -x "$work/uv-tool/lib/bin/uv" ]]; then
    mkdir -p "$work/uv-tool/bin" && ln -sf ../lib/bin/uv "$work/uv-tool/bin/uv"
  fi
fi
[[ -x "$work/uv-tool/bin/uv" ]] && uv_bin="$work/uv-tool/bin/uv"

with_uv() {
  local dir=$1
  UV_CACHE_DIR="${warm_uv_cache:-$dir/uv-cache}" "$uv_bin" pip install -q --no-deps \
    --target "$dir/tree" --index-url "$index" "${pins[@]}" > /dev/null 2>&1
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

seconds() { echo "$1 / 1000" | bc -l; }
echo "== install from a package index (${#pins[@]} wheels, $((bytes / 1000000)) MB; median of $runs)"
echo "  cold: empty caches"
hand=$(time_of by_hand)
ours=$(time_of with_cudaenv)
printf '  %-58s %8.2f s\n' "pip download --no-deps + unzip, one after another" "$(seconds "$hand")"
printf '  %-58s %8.2f s\n' "cudaenv install --source pypi --components minimal" "$(seconds "$ours")"
if [[ -n "$uv_bin" ]]; then
  uv_cold=$(time_of with_uv)
  printf '  %-58s %8.2f s\n' "uv pip install --no-deps --target ($("$uv_bin" --version))" "$(seconds "$uv_cold")"
fi
printf '  ratio cudaenv / (pip download + unzip) = %.2f\n' "$(echo "$ours / $hand" | bc -l)"
[[ -n "$uv_bin" ]] && printf '  ratio cudaenv / uv, cold = %.2f\n' "$(echo "$ours / $uv_cold" | bc -l)"

# Warm: the caches filled once, then each run a reinstall from them.
echo "  warm: the wheels already cached, a reinstall"
warm="$work/warm"
rm -rf "$warm" && mkdir -p "$warm"
with_cudaenv "$warm"
ours_warm=$(warm_root="$warm/root" time_of with_cudaenv)
printf '  %-58s %8.2f s\n' "cudaenv install --force (downloads and unpacked store warm)" "$(seconds "$ours_warm")"
if [[ -n "$uv_bin" ]]; then
  with_uv "$warm"
  uv_warm=$(warm_uv_cache="$warm/uv-cache" time_of with_uv)
  printf '  %-58s %8.2f s\n' "uv pip install into a new target (its cache warm)" "$(seconds "$uv_warm")"
  printf '  ratio cudaenv / uv, warm = %.2f\n' "$(echo "$ours_warm / $uv_warm" | bc -l)"
fi

# The second release: 13.0.3 after 13.0.2 in one store.
second="$work/second"
rm -rf "$second" && mkdir -p "$second"
CUDAENV_ROOT="$second/root" "$cudaenv" install 13.0.2 --source pypi --components minimal \
  --index-url "$index" > /dev/null
downloads_before=$(du -sb "$second/root/cache/downloads" | cut -f1)
disk_before=$(du -sk "$second/root" | cut -f1)
start=$(now)
CUDAENV_ROOT="$second/root" "$cudaenv" install 13.0.3 --source pypi --components minimal \
  --index-url "$index" > /dev/null
end=$(now)
downloaded=$(( $(du -sb "$second/root/cache/downloads" | cut -f1) - downloads_before ))
added_kib=$(( $(du -sk "$second/root" | cut -f1) - disk_before ))
unpacked_kib=$(du -sk "$second/root/toolkits/13.0.3" | cut -f1)
echo "  second release: cudaenv install 13.0.3 after 13.0.2 (the same component wheels)"
printf '  %-58s %8.2f s\n' "time" "$(seconds "$(ms "$start" "$end")")"
printf '  %-58s %8d bytes\n' "downloaded" "$downloaded"
printf '  %-58s %8d KiB of %d KiB (the rest linked from 13.0.2)\n' "disk added" "$added_kib" "$unpacked_kib"
CUDAENV_ROOT="$second/root" "$cudaenv" cache | grep "shared unpacked" | sed 's/^/  cudaenv cache: /' || true
