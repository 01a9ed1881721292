#!/usr/bin/env bash
# Triton's ptxas named through a wrapper script, as sites put `exec …/bin/ptxas "$@"` scripts on
# PATH: `scan` and `doctor` read the script through to the toolkit's ptxas (never running it).
# Run from the repository root with $CUDAENV_BIN_DIR and $OUT, on the GPU machine.
set -uo pipefail
bin="$CUDAENV_BIN_DIR/cudaenv"
python=$(command -v python3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
real=/usr/local/cuda-13.0/bin/ptxas
[[ -x $real ]] || real=$(command -v ptxas)
printf '#!/bin/sh\nexec %s "$@"\n' "$real" >"$work/ptxas"
chmod +x "$work/ptxas"

record() {  # record NAME CMD…: "$ CMD", its stdout+stderr, "exit N" into $OUT/NAME.txt
  local name=$1; shift
  { echo "\$ ${*/#$bin/cudaenv}"; timeout 300 "$@" 2>&1; echo "exit $?"; } >"$OUT/$name.txt"
}

{ echo "\$ cat $work/ptxas"; cat "$work/ptxas"; } >"$OUT/triton-wrapper-script.txt"
export TRITON_PTXAS_PATH="$work/ptxas"
record scan-triton-wrapper "$bin" scan --python "$python"
"$bin" scan --python "$python" --json 2>/dev/null |
  "$python" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["triton"], indent=2))' \
    >"$OUT/scan-triton-wrapper.json"
"$bin" doctor --json 2>/dev/null |
  "$python" -c 'import json, sys; print(json.dumps([f for f in json.load(sys.stdin)["findings"] if f["id"] == "triton-ptxas"], indent=2))' \
    >"$OUT/doctor-triton-wrapper.json"
