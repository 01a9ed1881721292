#!/usr/bin/env bash
# .cudaenv.lock on the GPU machine. Run from the repository root with
# $CUDAENV_BIN_DIR (cudaenv, cudaenv-full, cudaenv-shim) and $OUT. Packs cuda_nvcc and cuda_cudart of
# /usr/local/cuda-13.0 into NVIDIA's redist layout as release 13.0.2 (it ships nvcc 13.0.88), serves
# it on 127.0.0.1, and in a project declaring [targets.h200] runs lock, lock --check, sync,
# env --target and verify --record. Writes each command's output (with its exit status) and the
# resulting .cudaenv.lock into $OUT, for docs/examples/.
set -uo pipefail
bin="$CUDAENV_BIN_DIR/cudaenv"
repo=$(pwd)
work=$(mktemp -d)
server=
trap '[[ -n $server ]] && kill "$server"; rm -rf "$work"' EXIT
export CUDAENV_ROOT="$work/root" HOME="$work/home" CUDAENV_HTTP_ATTEMPTS=2
mkdir -p "$HOME"

record() {  # record NAME CMD…: "$ CMD", its stdout+stderr, "exit N" into $OUT/NAME.txt
  local name=$1; shift
  { echo "\$ ${*/#$bin/cudaenv}"; timeout 300 "$@" 2>&1; echo "exit $?"; } >"$OUT/lock-$name.txt"
}

prefix=/usr/local/cuda-13.0
nvcc_version=$("$prefix/bin/nvcc" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
echo "nvcc $nvcc_version at $prefix" >"$OUT/lock-mirror.txt"
PYTHONPATH="$repo/tests/cli" python3 - "$prefix" "$work/mirror" "$nvcc_version" >>"$OUT/lock-mirror.txt" 2>&1 <<'PY'
import sys
from repack import pack_system_toolkit
ok = pack_system_toolkit(sys.argv[1], sys.argv[2], "13.0.2", sys.argv[3])
print("packed" if ok else "could not pack the toolkit")
PY
echo '{}' >"$work/faults.json"
coproc MIRROR { python3 "$repo/tests/cli/mirror_server.py" "$work/mirror" "$work/faults.json"; }
server=$MIRROR_PID
read -r port <&"${MIRROR[0]}"
export CUDAENV_MIRROR="http://127.0.0.1:$port"

driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [[ -z $driver || -z $arch ]]; then  # no GPU here: an H200's values, to try the script out
  echo "nvidia-smi gave no driver or arch: using 580.95.05 and 9.0" >>"$OUT/lock-mirror.txt"
  driver=580.95.05 arch=9.0
fi
mkdir -p "$work/project"
cat >"$work/project/.cudaenv" <<TOML
cuda = "13.0.2"
[targets.h200]
driver = "$driver"
arch = ["$arch"]
TOML
cd "$work/project" || exit 1
export PWD="$work/project"
cp .cudaenv "$OUT/lock-project.cudaenv"
record lock "$bin" lock
record check "$bin" lock --check
record sync "$bin" sync --frozen
record env-target "$bin" env --target h200
record verify-record "$bin" verify 13.0.2 --record
record check-after-receipt "$bin" lock --check
cp .cudaenv.lock "$OUT/lock-h200.cudaenv.lock" 2>/dev/null || echo "no lock written" >"$OUT/lock-h200.cudaenv.lock"
