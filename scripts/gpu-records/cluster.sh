#!/usr/bin/env bash
# Cluster record on a real GPU node: a system store with two small toolkits, what a user's
# `cudaenv list` and `cudaenv doctor` (finding "stores": which store, whether this driver runs
# each) say about it, the driver file the modulefiles read at load time, and a written modulefile.
# Run from the repository root; needs $CUDAENV_BIN_DIR and $OUT. No network: a directory mirror.
set -uo pipefail
bin="$CUDAENV_BIN_DIR/cudaenv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/mirror" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
from synthetic_mirror import toolkit_release
toolkit_release(sys.argv[1], "12.4.1", "12.4.131")
toolkit_release(sys.argv[1], "13.0.2", "13.0.88")
PY
mkdir -p "$work/home"
export HOME="$work/home"
for release in 12.4.1 13.0.2; do
  CUDAENV_ROOT="$work/opt/cudaenv" "$bin" install "$release" --mirror "$work/mirror" >/dev/null 2>&1 \
    || echo "install $release failed" >&2
done
export CUDAENV_SYSTEM_ROOTS="$work/opt/cudaenv"
{ echo "\$ cudaenv list"; "$bin" list 2>&1; } | sed "s|$work|/tmp/cluster|g" > "$OUT/cluster-list-h200.txt"
{ echo "\$ cudaenv doctor"; "$bin" doctor 2>&1; echo "(exit $?)"; } | sed "s|$work|/tmp/cluster|g" \
  > "$OUT/cluster-doctor-h200.txt"
{ for f in /sys/module/nvidia/version /proc/driver/nvidia/version; do
    echo "== $f"; cat "$f" 2>&1; done; } > "$OUT/cluster-driver-files-h200.txt"
"$bin" modules write "$work/modulefiles" > "$OUT/cluster-modules-write-h200.txt" 2>&1
sed "s|$work|/tmp/cluster|g" "$work/modulefiles/cuda/13.0.2.lua" > "$OUT/cluster-modulefile-13.0.2-lua.txt" 2>&1
"$bin" modules write "$work/modulefiles-tcl" --format tcl >/dev/null 2>&1
if command -v tclsh >/dev/null; then
  # The Tcl modulefile's driver check alone, with the real driver files: the procs it defines.
  awk '/^proc cudaenv_older/{on=1} /^if \{\[module-info/{on=0} on' \
    "$work/modulefiles-tcl/cuda/13.0.2" > "$work/check.tcl"
  echo 'puts "driver read by the modulefile: [cudaenv_driver]"' >> "$work/check.tcl"
  tclsh "$work/check.tcl" > "$OUT/cluster-modulefile-driver-h200.txt" 2>&1
fi
exit 0
