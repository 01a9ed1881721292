#!/usr/bin/env bash
# bench/run scan: `cudaenv scan` over a tree shaped like a PyTorch install — torch's own libraries
# beside the NVIDIA wheels' cuBLAS, cuDNN, cuFFT, cuSPARSE… (gigabytes of fatbinaries). SCAN_TREE
# names the tree (on a GPU machine: the real torch, e.g. $(python3 -c 'import torch, os;
# print(os.path.dirname(torch.__file__))')/..); by default the active toolkit's lib64, which holds
# the same NVIDIA libraries. Compared with `cuobjdump --list-elf` over the same files where
# cuobjdump is installed. Prints medians and ratios; the target is under 2 s.
set -euo pipefail
build_dir=$1
cudaenv=${CUDAENV_BIN:-"$(cd "$build_dir" && pwd)/src/cudaenv"}
runs=5
[[ "${BENCH_QUICK:-0}" == 1 ]] && runs=2

tree=${SCAN_TREE:-}
if [[ -z "$tree" ]]; then
  for candidate in "${CUDA_HOME:-}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    if [[ -d "$candidate" ]]; then tree=$candidate; break; fi
  done
fi
if [[ -z "$tree" || ! -d "$tree" ]]; then
  echo "bench scan: no tree to scan (set SCAN_TREE, or install a toolkit)" >&2
  [[ "${BENCH_QUICK:-0}" == 1 ]] && exit 0
  exit 1
fi

# Median wall time in ms of N runs.
median_ms() {
  local n=$1; shift
  local samples=()
  for ((i = 0; i < n; i++)); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    samples+=($(( (end - start) / 1000 )))
  done
  printf '%s\n' "${samples[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

size=$(du -sLh "$tree" 2>/dev/null | cut -f1)
# Exit 1 only says some binary has no code for sm_90: the count is what matters here.
files=$({ "$cudaenv" scan "$tree" --arch 9.0 --json || true; } |
  python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r["binaries"]))')
if [[ "$files" -eq 0 ]]; then
  echo "bench scan: cudaenv scan found no GPU binaries in $tree" >&2
  exit 1
fi
echo "== scan of $tree ($size, $files CUDA binaries; $runs runs, warm page cache)"
"$cudaenv" scan "$tree" --arch 9.0 >/dev/null 2>&1 || true  # warm the page cache
ours=$(median_ms "$runs" "$cudaenv" scan "$tree" --arch 9.0 --json)
printf '%-60s %10s ms\n' "cudaenv scan --arch 9.0 --json" "$ours"
cuobjdump=$(command -v cuobjdump || true)
[[ -z "$cuobjdump" && -x /usr/local/cuda/bin/cuobjdump ]] && cuobjdump=/usr/local/cuda/bin/cuobjdump
if [[ -n "$cuobjdump" ]]; then
  list_all() { find "$tree" -type f -name '*.so*' -exec "$cuobjdump" --list-elf {} + ; }
  theirs=$(median_ms 1 list_all)
  printf '%-60s %10s ms\n' "cuobjdump --list-elf over the same files" "$theirs"
  awk -v o="$ours" -v t="$theirs" 'BEGIN { printf "ratios: scan / 2 s target = %.2f; scan / cuobjdump = %.3f\n", o / 2000, o / t }'
else
  awk -v o="$ours" 'BEGIN { printf "ratios: scan / 2 s target = %.2f (no cuobjdump here to compare with)\n", o / 2000 }'
fi
