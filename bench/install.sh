#!/usr/bin/env bash
# bench/run install: `cudaenv install` from a local HTTP mirror against the floor of the same
# work done with standard tools: every archive fetched with curl, piped through sha256sum and
# `tar -xJ`, all archives in parallel; and the best serial pipeline. Prints the ratios.
# The mirror is this machine's own CUDA toolkit (compiler, NVVM, runtime and the math libraries)
# packed as NVIDIA packs its redist archives, cached in the build directory. With BENCH_QUICK=1
# it is a small synthetic release instead (no nvcc needed) and each figure is one run.
set -euo pipefail
shopt -s inherit_errexit  # a failed step inside $(...) fails the benchmark, not just the step
build_dir=$1
quick=${BENCH_QUICK:-0}
cudaenv="$build_dir/src/cudaenv"
work="$build_dir/bench-install"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/needs.sh
source "$repo/bench/needs.sh"
mkdir -p "$work"

# One archive per component, split the way NVIDIA splits a toolkit, packed with xz's default
# preset (multi-threaded packing only to save time; decoding stays one stream per archive).
pack_component() {  # name, then paths relative to the prefix
  local name=$1; shift
  local top="$name-linux-x86_64-$nvcc_version-archive"
  local out="$mirror/cuda/redist/$name/linux-x86_64/$top.tar.xz"
  mkdir -p "$(dirname "$out")"
  (cd "$prefix" && tar --transform "s,^,$top/," -cf - "$@") | xz -6 -T0 > "$out"
  echo "$name $out"
}

pack_mirror() {
  local lib=${libdir#"$prefix"/}
  local list="$work/components.txt"
  : > "$list"
  pack_component cuda_nvcc bin >> "$list"
  [[ -d "$prefix/nvvm" ]] && pack_component libnvvm nvvm >> "$list"
  pack_component cuda_cudart include $(cd "$prefix" && ls -d "$lib"/libcudart* "$lib"/libcudadevrt.a) >> "$list"
  local component pattern
  for component in libcufft:libcufft libcurand:libcurand libcusparse:libcusparse cuda_nvrtc:libnvrtc \
                   libnvjitlink:libnvJitLink cuda_cupti:libcupti libcublas:libcublas.so; do
    pattern=${component#*:}
    compgen -G "$libdir/$pattern*" >/dev/null || continue
    pack_component "${component%%:*}" $(cd "$prefix" && ls -d "$lib/$pattern"*) >> "$list"
  done
  python3 - "$list" "$manifest" "$mirror" "$nvcc_version" "$release" <<'PY'
import hashlib, json, os, sys
listing, manifest, mirror, version, release = sys.argv[1:]
doc = {"release_date": "2025-10-09", "release_label": release, "release_product": "cuda"}
for line in open(listing):
    name, path = line.split()
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    doc[name] = {"name": name, "license": "CUDA Toolkit", "version": version,
                 "linux-x86_64": {"relative_path": os.path.relpath(path, f"{mirror}/cuda/redist"),
                                  "sha256": digest, "md5": "", "size": str(os.path.getsize(path))}}
json.dump(doc, open(manifest, "w"), indent=4)
PY
}

# Quick mode: three small components of incompressible bytes, built with the test suite's
# synthetic mirror (archives packed exactly as NVIDIA packs them).
synthetic_mirror() {
  python3 - "$repo/tests/cli" "$mirror" "$release" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import synthetic_mirror as m
mirror, release = sys.argv[2:]
m.write_release(mirror, release, {
    "cuda_nvcc": ("12.4.131", [("bin/nvcc", m.nvcc_script(release, "12.4.131"), 0o755)], 1 << 20),
    "cuda_cudart": ("12.4.127", [("lib/libcudart.so.12", "elf", 0o644)], 1 << 20),
    "cuda_cccl": ("12.4.127", [("include/cub/cub.cuh", "/* cub */\n", 0o644)], 1 << 18),
})
PY
}

if [[ $quick -eq 1 ]]; then
  runs=1
  release=12.4.1
  mirror="$work/mirror-quick"
  manifest="$mirror/cuda/redist/redistrib_$release.json"
  if [[ ! -f "$manifest" ]]; then rm -rf "$mirror"; synthetic_mirror; fi
else
  runs=3
  nvcc=$(command -v nvcc || true)
  if [[ -z "$nvcc" ]]; then echo "bench install: no nvcc on PATH to pack; skipped (bench/run --quick needs none)"; exit 0; fi
  nvcc_version=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')
  release="$(echo "$nvcc_version" | cut -d. -f1,2).0"
  mirror="$work/mirror-split"
  manifest="$mirror/cuda/redist/redistrib_$release.json"
  # Where nvcc really runs from (nvcc -dryrun's _HERE_): PATH may hold a wrapper script.
  here=$("$nvcc" -dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ _HERE_=//p' | head -1)
  prefix=$(dirname "${here:-$(dirname "$(readlink -f "$nvcc")")}")
  libdir=$(readlink -f "$prefix/lib64")
  if [[ ! -f "$manifest" ]]; then
    echo "packing the local toolkit into $mirror (once)..."
    rm -rf "$mirror"
    pack_mirror
  fi
fi

faults="$work/faults.json"
echo '{}' > "$faults"
coproc server { exec python3 "$repo/tests/cli/mirror_server.py" "$mirror" "$faults"; }
trap 'kill $server_PID 2>/dev/null || true' EXIT
read -r port <&"${server[0]}"
base="http://127.0.0.1:$port"

mapfile -t urls < <(python3 -c "
import json
m = json.load(open('$manifest'))
for k, v in m.items():
    if isinstance(v, dict) and 'linux-x86_64' in v: print('$base/cuda/redist/' + v['linux-x86_64']['relative_path'])")
bytes=$(python3 -c "
import json
m = json.load(open('$manifest'))
print(sum(int(v['linux-x86_64']['size']) for v in m.values() if isinstance(v, dict) and 'linux-x86_64' in v))")
jobs=$(nproc)

now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

pipeline() {  # one archive: download | hash | unpack, bytes flowing once
  set -o pipefail
  local url=$1 dir=$2
  mkdir -p "$dir"
  curl -sf "$url" | tee >(sha256sum > "$dir.sha256") | tar -xJ -C "$dir" --strip-components=1
}
export -f pipeline

run_floor() {  # $1: parallelism
  local out="$work/floor"
  rm -rf "$out"; mkdir -p "$out"
  local start end
  start=$(now)
  printf '%s\n' "${urls[@]}" | xargs -P "$1" -I{} bash -c 'pipeline "$1" "$2/$(basename "$1")"' _ {} "$out"
  end=$(now)
  ms "$start" "$end"
}

run_cudaenv() {
  local root="$work/root" log="$work/install.log"
  rm -rf "$root"
  local start end
  start=$(now)
  if ! CUDAENV_ROOT="$root" "$cudaenv" install "$release" --mirror "$base" --jobs "$jobs" >"$log" 2>&1; then
    cat "$log" >&2
    echo "bench install: cudaenv install failed" >&2
    return 1
  fi
  end=$(now)
  if [[ ! -f "$root/toolkits/$release/cudaenv-receipt.json" ]]; then
    echo "bench install: cudaenv install left no receipt in $root/toolkits/$release" >&2
    return 1
  fi
  ms "$start" "$end"
}

median_of() {  # N, then a timing function and its arguments: the median of N runs
  local n=$1 i sample; shift
  local samples=()
  for ((i = 0; i < n; i++)); do sample=$("$@"); samples+=("$sample"); done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(((n + 1) / 2))p"
}

echo "== install: $release, ${#urls[@]} archives, $((bytes / 1000000)) MB of xz, $jobs cores, mirror on 127.0.0.1, median of $runs"
if bench_tool curl curl && bench_tool xz xz-utils; then
  floor=$(median_of "$runs" run_floor "$jobs")
  serial=$(median_of "$runs" run_floor 1)
  ours=$(median_of "$runs" run_cudaenv)
  printf '%-58s %8s ms\n' "curl | sha256sum | tar -xJ, all archives in parallel" "$floor"
  printf '%-58s %8s ms\n' "the same, one archive after another (serial)" "$serial"
  printf '%-58s %8s ms\n' "cudaenv install --jobs $jobs (cold cache)" "$ours"
  awk -v o="$ours" -v f="$floor" -v s="$serial" -v j="$jobs" 'BEGIN {
    f = f > 0 ? f : 1; s = s > 0 ? s : 1
    printf "ratios: cudaenv / parallel floor = %.2f (target <= 1.15); cudaenv / (serial / %d cores) = %.2f (target <= 1.00)\n",
      o / f, j, o / (s / j) }'
else
  ours=$(median_of "$runs" run_cudaenv)
  printf '%-58s %8s ms\n' "cudaenv install --jobs $jobs (cold cache)" "$ours"
  echo "ratios: not measured (no curl or xz to build the floor with)"
fi
