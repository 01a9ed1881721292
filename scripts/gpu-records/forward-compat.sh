#!/usr/bin/env bash
# Forward compatibility on the GPU machine (docs/forward-compat.md): its image carries NVIDIA's
# cuda-compat-13-0 (/usr/local/cuda-13.0/compat, libcuda 580.95.05) while the loaded kernel module
# is newer, the real negative case. Records what doctor says of it, doctor and verify with it put
# first on LD_LIBRARY_PATH by hand (the real error 803), what torch says then, and resolve's
# forward-compatibility answer for this H200 on an older driver. Inputs: $OUT; cudaenv on PATH
# through $CUDAENV_BIN_DIR (run-all.sh). Under a minute; no network.
set -uo pipefail
: "${OUT:?set OUT}"
export PATH="${CUDAENV_BIN_DIR:?}:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"
mkdir -p "$HOME" "$OUT"
log="$OUT/forward-compat-h200.txt"
say() { printf '\n$ %s\n' "$*" >>"$log"; }
record() {
  say "$*"
  "$@" >>"$log" 2>&1
  echo "[exit $?]" >>"$log"
}
finding() {  # the forward-compat and driver-toolkit findings of doctor --json, readable
  python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if f["id"] in ("forward-compat", "driver-toolkit"):
        print(f["id"], f["status"] + ":", f["summary"])
        for e in f["evidence"]: print("   evidence:", e)
        for x in f["fix"]: print("   fix:", x)'
}
compat=/usr/local/cuda-13.0/compat
{
  echo "# Forward compatibility on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "# $(head -1 /proc/driver/nvidia/version)"
} >"$log"
record ls -l "$compat"
say "cudaenv doctor --json | (forward-compat and driver-toolkit findings)"
cudaenv doctor --json 2>>"$log" | finding >>"$log" 2>&1
say "LD_LIBRARY_PATH=$compat cudaenv doctor --json | (the same findings)"
LD_LIBRARY_PATH=$compat cudaenv doctor --json 2>>"$log" | finding >>"$log" 2>&1
record cudaenv compat list
say "LD_LIBRARY_PATH=$compat cudaenv verify"
(cd "$work" && LD_LIBRARY_PATH=$compat cudaenv verify) >>"$log" 2>&1
echo "[exit $?]" >>"$log"
say "LD_LIBRARY_PATH=$compat cudaenv verify --json | (cause)"
(cd "$work" && LD_LIBRARY_PATH=$compat cudaenv verify --json) 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: d.get(k) for k in ("ok", "cause", "message", "fix")})' >>"$log" 2>&1
say "LD_LIBRARY_PATH=$compat python3 -c 'import torch; torch.zeros(1, device=\"cuda\")'"
LD_LIBRARY_PATH=$compat timeout 120 python3 -c 'import torch; torch.zeros(1, device="cuda")' 2>&1 |
  tail -3 >>"$log"
record cudaenv resolve --cuda 12.8 --driver 535.104.05
record cudaenv resolve --cuda 12.8 --driver 535.104.05 --gpu "RTX 4090"
