#!/usr/bin/env bash
# bench/run doctor: `cudaenv doctor` on this machine, as a user runs it, with the python3 that has
# the frameworks: DOCTOR_PYTHON names its directory's interpreter (on the GPU machine, the venv
# with torch, JAX and CuPy: DOCTOR_PYTHON=$VENV/bin/python3), else the first python3 on PATH. The
# goal is 1 s; the interpreter started alone (python3 -c pass) and asked what doctor asks it are
# the floors beside it. Doctor's exit code only says what it found: any answer is a run.
set -euo pipefail
build_dir=$1
cudaenv=${CUDAENV_BIN:-"$(cd "$build_dir" && pwd)/src/cudaenv"}
runs=5
[[ "${BENCH_QUICK:-0}" == 1 ]] && runs=2

python=${DOCTOR_PYTHON:-$(command -v python3 || true)}
path=$PATH
[[ -n "$python" ]] && path="$(dirname "$python"):$PATH"

# Median wall time in seconds of N runs.
median_s() {
  local n=$1; shift
  local samples=()
  for ((i = 0; i < n; i++)); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    samples+=($(( (end - start) / 1000 )))
  done
  printf '%s\n' "${samples[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000000}'
}

doctor() { PATH=$path "$cudaenv" doctor --json; }
# A report that is no JSON document means doctor broke: no timing of it.
if ! doctor 2>/dev/null | python3 -c 'import json,sys; json.load(sys.stdin)'; then
  echo "bench doctor: cudaenv doctor --json printed no report" >&2
  exit 1
fi
frameworks=$(doctor 2>/dev/null | python3 -c '
import json, sys
report = json.load(sys.stdin)
f = next(f for f in report["findings"] if f["id"] == "framework")
print(f["summary"])')
echo "== doctor with ${python:-no python3} ($runs runs; framework check: $frameworks)"
ours=$(median_s "$runs" doctor)
printf '%-60s %10s s\n' "cudaenv doctor --json" "$ours"
if [[ -n "$python" ]]; then
  bare=$(median_s "$runs" "$python" -c pass)
  printf '%-60s %10s s\n' "$python -c pass (the interpreter's start)" "$bare"
  awk -v o="$ours" -v p="$bare" 'BEGIN { printf "ratios: doctor / 1 s goal = %.2f; doctor / python start = %.1fx\n", o, o / p }'
else
  awk -v o="$ours" 'BEGIN { printf "ratios: doctor / 1 s goal = %.2f\n", o }'
fi
