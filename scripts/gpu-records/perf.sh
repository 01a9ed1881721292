#!/usr/bin/env bash
# The hot paths on the GPU machine, from the release bundle: bench/activate.sh (prompt, enter and
# leave, the shim beside its floors: one exec of /bin/true and a static no-op exec), bench/doctor.sh
# with the image's python3 (torch, JAX and CuPy), and `resolve` with detection beside reading the
# kernel's version file. Run from the repository root.
# Inputs: $BUNDLE, $OUT. A few minutes; no network (direnv is not on that machine: its column
# stays n/a, and docs/benchmarks.md takes direnv's figure from the same machine's earlier run).
set -uo pipefail
: "${BUNDLE:?set BUNDLE to the bundle tarball}" "${OUT:?set OUT}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT" "$work/prefix" "$work/build/src"
tar -C "$work/prefix" --strip-components=1 -xzf "$BUNDLE"
# bench/ takes a build directory: the bundle's programs where a build puts them.
ln -s "$work/prefix/bin/cudaenv" "$work/build/src/cudaenv"
ln -s "$work/prefix/libexec/cudaenv/cudaenv-shim" "$work/build/src/cudaenv-shim"
ln -s "$work/prefix/libexec/cudaenv/cudaenv-full" "$work/build/src/cudaenv-full"
machine="$(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) cores"

{
  echo "# bench/activate.sh on $machine"
  BENCH_QUICK=1 RUNS=500 BENCH_INSTALL=0 bash bench/activate.sh "$work/build"
} >"$OUT/bench-activate-h200.txt" 2>&1

{
  echo "# bench/doctor.sh on $machine, python3 = $(command -v python3)"
  python3 -c 'import torch, jax, cupy; print("torch", torch.__version__, "jax", jax.__version__, "cupy", cupy.__version__)' 2>&1 | tail -1
  BENCH_INSTALL=0 bash bench/doctor.sh "$work/build"
  echo
  echo '$ cudaenv doctor  (one run, its findings)'
  /usr/bin/time -f '%e s wall' "$work/build/src/cudaenv" doctor 2>&1 | tail -25
} >"$OUT/bench-doctor-h200.txt" 2>&1

{
  echo "# resolve with detection on $machine: 50 runs each, medians in ms"
  median_ms() {
    local samples=() i start end
    for ((i = 0; i < 50; i++)); do
      start=$(date +%s%N)
      "$@" >/dev/null 2>&1
      end=$(date +%s%N)
      samples+=($(((end - start) / 1000)))
    done
    printf '%s\n' "${samples[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
  }
  echo "resolve --torch 2.9 (driver from the kernel file, GPUs from this boot's record): $(median_ms "$work/build/src/cudaenv" resolve --torch 2.9) ms"
  echo "resolve --torch 2.9 --arch 9.0 (no GPU probe needed):                           $(median_ms "$work/build/src/cudaenv" resolve --torch 2.9 --arch 9.0) ms"
  echo "cat /proc/driver/nvidia/version (the floor of reading the driver):              $(median_ms cat /proc/driver/nvidia/version) ms"
  echo "/bin/true (one exec):                                                           $(median_ms /bin/true) ms"
  echo
  echo '$ cudaenv resolve --torch 2.9'
  "$work/build/src/cudaenv" resolve --torch 2.9 2>&1 | head -20
} >"$OUT/resolve-detection-h200.txt" 2>&1
echo "perf records written"
