#!/usr/bin/env bash
# scan and why on the real stack, beyond scan.sh: NVIDIA's own libraries of the toolkit (cubins
# without kernels are "no kernels", never "none"), the version cuDNN's ELF carries, and the
# PyTorch index a fix names for a GPU CUDA 13 no longer builds for. Needs $CUDAENV_BIN_DIR, $OUT.
set -uo pipefail
bin="$CUDAENV_BIN_DIR/cudaenv"
python=$(command -v python3)

record() {  # record NAME CMD…: "$ CMD", its stdout+stderr, "exit N" into $OUT/NAME.txt
  local name=$1; shift
  { echo "\$ ${*/#$bin/cudaenv}"; timeout 300 "$@" 2>&1; echo "exit $?"; } >"$OUT/$name.txt"
}

record scan-cuda-lib64 "$bin" scan /usr/local/cuda-13.0/lib64
torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
if [[ -n "$torch_dir" && -f "$torch_dir/lib/libtorch_cuda.so" ]]; then
  record why-libcudnn-graph "$bin" why libcudnn_graph.so.9 --for "$torch_dir/lib/libtorch_cuda.so"
  record torch-index-volta "$bin" scan "$torch_dir/lib" --arch 7.0
fi
