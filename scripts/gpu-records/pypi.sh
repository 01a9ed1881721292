#!/usr/bin/env bash
# GPU machine record for `cudaenv install --source pypi` (issue 18): the machine has no network,
# but its python3 carries NVIDIA's wheels as installed distributions (torch cu130 with
# nvidia-cudnn-cu13, nvidia-cuda-runtime and the cuda-toolkit metapackage). Each is rebuilt into
# a wheel from its RECORD, served as a PEP 503/691 index on loopback (tests/cli/pypi_index.py),
# and installed with `cudaenv install 13.0.2 --source pypi --components cuda_cudart --cudnn ...`;
# then `cudaenv verify --cudnn` with the system CUDA 13.0 compiler loads that cuDNN on the GPU
# (cudnnGetVersion). Run from the repository root; needs $CUDAENV_BIN_DIR and $OUT.
set -uo pipefail
: "${CUDAENV_BIN_DIR:?}" "${OUT:?}"
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null; rm -rf "$work"' EXIT
export CUDAENV_ROOT="$work/root" HOME="$work/home"
mkdir -p "$HOME" "$work/wheels"
cudaenv="$CUDAENV_BIN_DIR/cudaenv"

# Rebuild installed distributions into wheels: the files their RECORD lists, with their modes.
"$PYTHON" - "$work/wheels" nvidia-cudnn-cu13 nvidia-cuda-runtime cuda-toolkit <<'PY' 2>&1 | tee "$OUT/pypi-wheels-h200.txt"
import importlib.metadata as md, os, re, sys, zipfile
out = sys.argv[1]
for name in sys.argv[2:]:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        print(f"{name}: not installed here"); continue
    base = str(dist.locate_file(""))
    stem = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    pure = not any(str(f).startswith("nvidia/") for f in dist.files or [])
    tag = "py3-none-any" if pure else "py3-none-manylinux_2_27_x86_64"
    wheel = os.path.join(out, f"{stem}-{dist.version}-{tag}.whl")
    count = 0
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for f in dist.files or []:
            rel = str(f)
            path = os.path.join(base, rel)
            if rel.startswith("..") or "__pycache__" in rel or not os.path.isfile(path):
                continue
            info = zipfile.ZipInfo.from_file(path, rel)
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as data:
                z.writestr(info, data.read())
            count += 1
    print(f"{os.path.basename(wheel)}: {count} files, {os.path.getsize(wheel)} bytes")
PY
cudnn_version=$("$PYTHON" -c "import importlib.metadata as m; print(m.version('nvidia-cudnn-cu13'))")
cudnn_spec=$(echo "$cudnn_version" | cut -d. -f1-3)

echo '{}' > "$work/control.json"
"$PYTHON" tests/cli/pypi_index.py "$work/wheels" "$work/control.json" > "$work/port" &
server_pid=$!
for _ in $(seq 50); do [[ -s "$work/port" ]] && break; sleep 0.1; done
index="http://127.0.0.1:$(head -1 "$work/port")/simple"

{
  echo "\$ cudaenv install 13.0.2 --source pypi --index-url $index --components cuda_cudart --cudnn $cudnn_spec"
  "$cudaenv" install 13.0.2 --source pypi --index-url "$index" --components cuda_cudart --cudnn "$cudnn_spec" 2>&1
  echo "(exit $?)"
} | sed "s#$work#/tmp/work#g" | tee "$OUT/pypi-install-h200.txt"
{
  echo "\$ cudaenv list"
  "$cudaenv" list 2>&1
} | sed "s#$work#/tmp/work#g" | tee "$OUT/pypi-list-h200.txt"
{
  echo "\$ PATH=/usr/local/cuda-13.0/bin:\$PATH cudaenv verify --cudnn $cudnn_spec"
  PATH="/usr/local/cuda-13.0/bin:$PATH" "$cudaenv" verify --cudnn "$cudnn_spec" 2>&1
  echo "(exit $?)"
} | sed "s#$work#/tmp/work#g" | tee "$OUT/pypi-verify-cudnn-h200.txt"
grep -q "cudnnGetVersion() = " "$OUT/pypi-verify-cudnn-h200.txt"
