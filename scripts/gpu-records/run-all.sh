#!/usr/bin/env bash
# Runs every record script of this directory on the GPU machine, in parallel, from the repository
# root, with the release bundle (scripts/package) copied into this directory and unpacked into a
# temporary prefix. Everything it records comes back as records.tgz in $OUT; the files of
# docs/examples/ named *-h200* and bundle-ubuntu-24.04.txt were made by it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?}"
final_out=$OUT
OUT=$(mktemp -d)
bundle=$(ls "$here"/cudaenv-*-linux-x86_64.tar.gz | head -1)
top=$(mktemp -d)
mkdir -p "$top/prefix" "$top/bin"
tar -C "$top/prefix" --strip-components=1 -xzf "$bundle"
ln -s "$top/prefix/bin/cudaenv" "$top/bin/cudaenv"
ln -s "$top/prefix/libexec/cudaenv/cudaenv-full" "$top/bin/cudaenv-full"
ln -s "$top/prefix/libexec/cudaenv/cudaenv-shim" "$top/bin/cudaenv-shim"
export CUDAENV_BIN_DIR="$top/bin"
"$top/bin/cudaenv" --version > "$OUT/version.txt" 2>&1
"$top/bin/cudaenv" doctor > "$OUT/doctor-h200.txt" 2>&1; echo "exit $?" >> "$OUT/doctor-h200.txt"
"$top/bin/cudaenv" doctor --json > "$OUT/doctor-h200.json" 2>/dev/null
pids=()
run_one() {  # name: its outputs in $OUT/name, its log in $OUT/name.log
  local name=$1 start=$SECONDS
  mkdir -p "$OUT/$name"
  BUNDLE="$bundle" OUT="$OUT/$name" timeout 300 bash "$here/$name.sh" > "$OUT/$name.log" 2>&1
  echo "exit $? after $((SECONDS - start)) s" >> "$OUT/$name.log"
}
for script in "$here"/*.sh; do
  name=$(basename "$script" .sh)
  [[ $name == run-all || $name == scan ]] && continue  # alone afterwards: it times a benchmark
  run_one "$name" &
  pids+=($!)
done
wait "${pids[@]}"
run_one scan
tail -n 2 "$OUT"/*.log
tar -C "$OUT" -czf "$final_out/records.tgz" .
