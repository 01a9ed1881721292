#!/usr/bin/env bash
# The team workflow on the GPU machine with the image's own torch (docs/lockfile.md): a project
# pinning CUDA 13.0 and torch 2.11 for [targets.h200] (gpu = "H200", driver branch 580), locked
# against a loopback mirror of the machine's toolkit (packed as release 13.0.2, as lock.sh does) and
# a loopback PyTorch index listing the image's torch 2.11.0+cu130 (its installed files packed into a
# wheel, so the digest the lock pins is of real bytes); then, as a teammate would, a fresh store
# and `sync --frozen` into the image's virtualenv (torch already there: proved by import, nothing
# installed), `verify --torch`, `verify --record` and `lock --check` after the receipt.
# Inputs: $OUT, $CUDAENV_BIN_DIR (run-all.sh). No network.
set -uo pipefail
: "${OUT:?set OUT}"
export PATH="${CUDAENV_BIN_DIR:?}:$PATH"
repo=$(pwd)
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
export HOME="$work/home" CUDAENV_ROOT="$work/root" CUDAENV_HTTP_ATTEMPTS=2
mkdir -p "$HOME" "$OUT"
log="$OUT/team-flow-h200.txt"
venv=${TORCH_VENV:-/opt/torch/.venv}  # TORCH_VENV: to try the script elsewhere
record() {
  printf '\n$ %s\n' "$*" >>"$log"
  timeout 300 "$@" >>"$log" 2>&1
  echo "[exit $?]" >>"$log"
}
serve() {  # serve SCRIPT DIR CONTROL NAME: a loopback server; its port in $work/NAME.port
  python3 "$repo/tests/cli/$1" "$2" "$3" >"$work/$4.port" 2>>"$log" &
  pids+=($!)
  for _ in $(seq 100); do [[ -s $work/$4.port ]] && break; sleep 0.1; done
}

prefix=/usr/local/cuda-13.0
nvcc_version=$("$prefix/bin/nvcc" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
{
  echo "# The team workflow on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "# mirror: $prefix (nvcc $nvcc_version) packed as CUDA 13.0.2; torch: $venv"
} >"$log"
PYTHONPATH="$repo/tests/cli" python3 - "$prefix" "$work/mirror" "$nvcc_version" >>"$log" 2>&1 <<'PY'
import sys
from repack import pack_system_toolkit
print("mirror:", "packed" if pack_system_toolkit(sys.argv[1], sys.argv[2], "13.0.2", sys.argv[3]) else "not packed")
PY
# The image's torch as a wheel: its installed files and dist-info, stored uncompressed, named as
# PyTorch's per-build index names the build.
"$venv/bin/python" - "$work/wheels" >>"$log" 2>&1 <<'PY'
import base64, hashlib, os, sys, zipfile
from importlib import metadata
dist = metadata.distribution("torch")
site = str(dist.locate_file(""))
# The version the build reports (torch.version.__version__, "2.11.0+cu130"): the file name PyTorch's
# per-build index gives the build, which PyPI's metadata (2.11.0) leaves untagged.
version = dist.version
for line in open(os.path.join(site, "torch", "version.py")):
    if line.startswith("__version__"):
        version = line.split("=", 1)[1].strip().strip("'\"")
os.makedirs(sys.argv[1], exist_ok=True)
tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
name = os.path.join(sys.argv[1], f"torch-{version}-{tag}-{tag}-manylinux_2_28_x86_64.whl")
with zipfile.ZipFile(name, "w", zipfile.ZIP_STORED) as wheel:
    for relative in dist.files:
        path = os.path.join(site, str(relative))
        if os.path.isfile(path) and not str(relative).startswith(".."):
            wheel.write(path, str(relative))
print("torch wheel:", os.path.basename(name), os.path.getsize(name) // 2**20, "MiB")
PY
echo '{}' >"$work/faults.json"
echo '{}' >"$work/index.json"
serve mirror_server.py "$work/mirror" "$work/faults.json" mirror
serve pypi_index.py "$work/wheels" "$work/index.json" index
mirror_port=$(head -1 "$work/mirror.port")
index_port=$(head -1 "$work/index.port")
export CUDAENV_MIRROR="http://127.0.0.1:$mirror_port"
export CUDAENV_FRAMEWORK_INDEX="http://127.0.0.1:$index_port/whl"
export PIP_INDEX_URL="http://127.0.0.1:$index_port/simple"

mkdir -p "$work/project"
cat >"$work/project/.cudaenv" <<'TOML'
cuda = "13.0"
[frameworks]
torch = "2.11"
[targets.h200]
gpu = "H200"
driver = "580"
TOML
cd "$work/project" || exit 1
export PWD="$work/project"
record cat .cudaenv
record cudaenv lock
# A teammate: a fresh store, the image's virtualenv active.
export CUDAENV_ROOT="$work/teammate" VIRTUAL_ENV=$venv PATH="$venv/bin:$PATH"  # as activate does
record cudaenv sync --frozen
record cudaenv current
record cudaenv verify --torch
record cudaenv verify --record
record cudaenv lock --check
record cat .cudaenv.lock
