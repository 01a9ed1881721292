#!/usr/bin/env bash
# The release bundle on the GPU machine (Ubuntu 24.04): unpacked into an empty prefix, run from
# another directory through PATH: --version, info, install from a loopback mirror (synthetic
# toolkit), use, and the bash hook activating it. Run from the repository root
# Inputs: $BUNDLE (cudaenv-<version>-linux-x86_64.tar.gz), $OUT (outputs, for
# docs/examples/). Under a minute; no network.
set -uo pipefail
: "${BUNDLE:?set BUNDLE to the bundle tarball}" "${OUT:?set OUT}"
repo=$PWD
work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$OUT"
log="$OUT/bundle-ubuntu-24.04.txt"
say() { printf '\n$ %s\n' "$*" >>"$log"; }
record() {  # runs a command, its output and exit status into the log
  say "$*"
  "$@" >>"$log" 2>&1
  echo "[exit $?]" >>"$log"
}

{
  echo "# The cudaenv release bundle on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(getconf GNU_LIBC_VERSION | awk '{print $2}')"
  echo "# bundle: $(basename "$BUNDLE") ($(sha256sum "$BUNDLE" | cut -c1-16)…)"
} >"$log"

prefix="$work/prefix"
mkdir -p "$prefix"
record tar -C "$prefix" --strip-components=1 -xzf "$BUNDLE"
export HOME="$work/home" PATH="$prefix/bin:/usr/bin:/bin" LANG=C.UTF-8
mkdir -p "$HOME"
unset CUDA_HOME CUDA_PATH CUDAENV_ROOT CUDAENV_MIRROR
cd "$work"
record cudaenv --version
record cudaenv info
# Libraries the full program resolved: from the bundle, or the system's glibc and libgcc_s.
say "ldd $prefix/libexec/cudaenv/cudaenv-full | sed 's|$work|…|'"
ldd "$prefix/libexec/cudaenv/cudaenv-full" 2>&1 | sed "s|$work|…|g" >>"$log"

python3 - "$work/mirror" <<EOF
import sys
from pathlib import Path
sys.path.insert(0, "$repo/tests/cli")
from synthetic_mirror import toolkit_release
toolkit_release(Path(sys.argv[1]), "12.4.1", "12.4.131")
EOF
echo '{}' >"$work/faults.json"
python3 "$repo/tests/cli/mirror_server.py" "$work/mirror" "$work/faults.json" >"$work/port" &
server_pid=$!
for _ in $(seq 50); do [[ -s "$work/port" ]] && break; sleep 0.1; done
mirror="http://127.0.0.1:$(cat "$work/port")"
record cudaenv install 12.4 --mirror "$mirror"
mkdir -p "$work/project"
cd "$work/project"
record cudaenv use 12.4
cd "$work"
echo 'eval "$(cudaenv init bash)"' >"$HOME/.bashrc"
say "bash -i (rc: eval \"\$(cudaenv init bash)\"): cd project; echo \$CUDAENV_ACTIVE; nvcc --version"
printf 'cd %q\necho "CUDAENV_ACTIVE=$CUDAENV_ACTIVE"\nnvcc --version\nexit\n' "$work/project" |
  TERM=dumb bash -i 2>&1 | grep -v "job control\|terminal process group" | sed "s|$work|…|g" >>"$log"
sed -i "s|$work|…|g" "$log"
cat "$log"
