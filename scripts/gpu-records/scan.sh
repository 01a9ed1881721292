#!/usr/bin/env bash
# cudaenv scan / why on the GPU machine. Run from the repository root
# with $CUDAENV_BIN_DIR (cudaenv, cudaenv-full, cudaenv-shim) and $OUT. Writes the records for
# docs/examples/ into $OUT: each file holds the command line, its output and its exit status.
set -uo pipefail
bin="$CUDAENV_BIN_DIR/cudaenv"
python=$(command -v python3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

record() {  # record NAME CMD…: "$ CMD", its stdout+stderr, "exit N" into $OUT/NAME.txt
  local name=$1; shift
  { echo "\$ ${*/#$bin/cudaenv}"; timeout 300 "$@" 2>&1; echo "exit $?"; } >"$OUT/$name.txt"
}

record scan-python "$bin" scan --python "$python"
"$bin" scan --python "$python" --json >"$OUT/scan-python.json" 2>"$OUT/scan-python.json.stderr"
record scan-default "$bin" scan

torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
if [[ -n "$torch_dir" && -f "$torch_dir/lib/libtorch_cuda.so" ]]; then
  record why-libcudnn "$bin" why libcudnn.so.9 --for "$torch_dir/lib/libtorch_cuda.so"
  record why-libcudart "$bin" why libcudart.so.13 --for "$torch_dir/lib/libtorch_cuda.so"
  record why-libcudnn-json "$bin" why libcudnn.so.9 --for "$torch_dir/lib/libtorch_cuda.so" --json
else
  echo "no torch with lib/libtorch_cuda.so for $python" >"$OUT/why-libcudnn.txt"
fi

# A deliberately sm_80-only extension, built here with the system toolkit's nvcc: `none` on an H200.
nvcc=/usr/local/cuda-13.0/bin/nvcc
[[ -x $nvcc ]] || nvcc=$(command -v nvcc)
mkdir -p "$work/site/sm80ext"
cat >"$work/kernel.cu" <<'CU'
__global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }
extern "C" void launch_scale(float* x) { scale<<<1, 32>>>(x, 2.0f); }
CU
if "$nvcc" -shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 "$work/kernel.cu" \
    -o "$work/site/sm80ext/_C.so" >"$OUT/sm80-build.txt" 2>&1; then
  record scan-sm80-extension "$bin" scan "$work/site/sm80ext"
else
  echo "nvcc failed; see sm80-build.txt" >"$OUT/scan-sm80-extension.txt"
fi

record doctor "$bin" doctor
record verify-torch "$bin" verify --torch

if [[ -n "$torch_dir" ]]; then
  { CUDAENV_BIN="$bin" SCAN_TREE="$(dirname "$torch_dir")" BENCH_QUICK=0 bench/scan.sh . 2>&1; echo "exit $?"; } \
    >"$OUT/bench-scan-torch.txt"
fi
{ CUDAENV_BIN="$bin" SCAN_TREE=/usr/local/cuda-13.0/lib64 bench/scan.sh . 2>&1; echo "exit $?"; } \
  >"$OUT/bench-scan-toolkit.txt"
