"""The programs as shipped: without sanitizers, `cudaenv` (the front) and `cudaenv-shim` start on
every prompt and every tool call, so they are linked statically — no dynamic loader, no shared
library to find. In the sanitizer build (CUDAENV_EXPECT_STATIC=0) that check is skipped; the
release configuration of scripts/test runs it. Whatever the build, a command run through
`cudaenv exec` gets SIGPIPE at its default, although cudaenv itself ignores it."""

import os
import shutil
import subprocess
from pathlib import Path

from harness import BINARY, case, check, clean_env, finish

PT_DYNAMIC, PT_INTERP = 2, 3


def program_headers(path):
    """The types of an ELF file's program headers (64-bit little-endian, as built here)."""
    data = Path(path).read_bytes()
    check(data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path} is a 64-bit LE ELF file")
    offset = int.from_bytes(data[0x20:0x28], "little")
    entry_size = int.from_bytes(data[0x36:0x38], "little")
    count = int.from_bytes(data[0x38:0x3A], "little")
    return [int.from_bytes(data[offset + i * entry_size:offset + i * entry_size + 4], "little")
            for i in range(count)]


def shipped_programs():
    directory = Path(BINARY).parent
    return [Path(BINARY), directory / "cudaenv-shim"]


@case
def the_front_program_and_the_shim_are_statically_linked(tmp):
    if os.environ.get("CUDAENV_EXPECT_STATIC") != "1":
        print("skip: a sanitizer build links the front program and the shim dynamically")
        return
    for program in shipped_programs():
        check(program.is_file(), f"{program} exists")
        if not program.is_file():
            continue
        headers = program_headers(program)
        check(PT_INTERP not in headers, f"{program.name} names no dynamic loader (PT_INTERP)")
        check(PT_DYNAMIC not in headers, f"{program.name} has no dynamic section (PT_DYNAMIC)")
        ldd = shutil.which("ldd")
        if ldd:
            proc = subprocess.run([ldd, str(program)], capture_output=True, text=True)
            check("not a dynamic executable" in proc.stdout + proc.stderr,
                  f"ldd {program.name} finds no shared library: {proc.stdout.strip()[:200]!r}")
    version = subprocess.run([BINARY, "--version"], capture_output=True, text=True, timeout=60)
    check(version.returncode == 0 and version.stdout.strip(), f"--version runs: {version!r}")


@case
def a_command_run_through_exec_gets_sigpipe_at_its_default(tmp):
    env = clean_env(tmp)
    proc = subprocess.run([BINARY, "exec", "--", "grep", "SigIgn", "/proc/self/status"],
                          env=env, capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"exec runs grep: {proc.returncode} {proc.stderr!r}")
    if proc.returncode == 0:
        ignored = int(proc.stdout.split(":", 1)[1].strip(), 16)
        check(not ignored & (1 << 12), f"SIGPIPE (13) is not ignored in the command: {proc.stdout!r}")


finish()
