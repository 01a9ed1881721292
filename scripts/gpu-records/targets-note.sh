#!/bin/bash
# On a real GPU: `cudaenv info` leaves the GPUs' archs for the prompt (cache/gpu-archs, keyed by
# boot id and driver); `current` and the prompt hook then name a GPU arch no declared target
# lists, without loading a driver library. Writes $OUT/current-arch-note-h200.txt.
set -u
B="$CUDAENV_BIN_DIR"
REPO=$(pwd)
W=$(mktemp -d)
export CUDAENV_ROOT="$W/root" HOME="$W/home"
mkdir -p "$HOME" "$CUDAENV_ROOT/toolkits" "$W/repo"
# A stand-in toolkit so that the project's pin activates (current prints the note after it).
cp -r "$REPO/tests/fixtures/toolkits/no-kernel-image" "$CUDAENV_ROOT/toolkits/13.0.2"
printf 'cuda = "13.0"\n[targets.a100]\ndriver = "535.104.05"\narch = ["8.0"]\n' > "$W/repo/.cudaenv"
cd "$W/repo"
hook="eval \"\$('$B/cudaenv-shim' hook-env --shell bash)\""
{
  echo '$ cat .cudaenv'; cat .cudaenv
  echo '$ cudaenv current    # no full probe yet: the GPUs are not known'
  "$B/cudaenv" current 2>&1
  echo '$ cudaenv info > /dev/null'
  "$B/cudaenv" info > /dev/null 2>&1; echo "(exit $?)"
  echo '$ cat $CUDAENV_ROOT/cache/gpu-archs'
  cat "$CUDAENV_ROOT/cache/gpu-archs" 2>&1
  echo '$ cudaenv current'
  "$B/cudaenv" current 2>&1
  echo '$ # the prompt hook, three prompts: said once'
  bash --noprofile --norc -c "$hook; $hook; $hook" 2>&1 > /dev/null
} > "$OUT/current-arch-note-h200.txt"
cat "$OUT/current-arch-note-h200.txt"
rm -rf "$W"
