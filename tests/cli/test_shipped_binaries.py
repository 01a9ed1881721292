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


# glibc's NSS: in a static program it cannot load its modules (sssd, LDAP) and fails or crashes.
NSS_FUNCTIONS = ["getpwuid_r", "getpwuid", "getpwnam_r", "getpwnam", "getgrgid_r", "getgrnam_r", "getpwent",
                 "getaddrinfo", "gethostbyname"]


def linked_symbols(program):
    """Every symbol the program defines or imports (nm, then nm -D for a dynamic one)."""
    names = set()
    for flags in ([], ["-D"]):
        proc = subprocess.run(["nm", *flags, str(program)], capture_output=True, text=True)
        names.update(line.split()[-1].split("@")[0] for line in proc.stdout.splitlines() if line.split())
    return names


@case
def the_fast_programs_never_call_nss(tmp):
    if not shutil.which("nm"):
        print("skip: no nm")
        return
    for program in shipped_programs():
        symbols = linked_symbols(program)
        check(len(symbols) > 100, f"{program.name} has a symbol table to read ({len(symbols)} names)")
        found = sorted(set(NSS_FUNCTIONS) & symbols)
        check(found == [], f"{program.name} links NSS functions: {found}")
        check(b"nsswitch.conf" not in program.read_bytes(), f"{program.name} carries glibc's NSS code")
    full = Path(BINARY).parent / "cudaenv-full"
    if not full.exists():
        full = Path(BINARY).parent.parent / "libexec" / "cudaenv" / "cudaenv-full"
    check("getpwuid_r" in linked_symbols(full), "the full program is the one that asks the passwd database")


def execs(args, env, cwd, program=BINARY):
    """The programs `program ARGS` executes (strace), and its result."""
    trace = cwd / "trace"
    if "ASAN_OPTIONS" in env or "ASAN_OPTIONS" in os.environ:  # LeakSanitizer cannot run under ptrace
        env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "")) + ":detect_leaks=0")
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), str(program), *args],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    return [line.split('"')[1] for line in trace.read_text().splitlines() if "execve(" in line and '"' in line], proc


@case
def without_home_the_front_program_hands_over_to_the_full_one(tmp):
    if not shutil.which("strace"):
        print("skip: no strace")
        return
    with_home = clean_env(tmp, CUDAENV_ROOT=tmp / "data")
    without = {k: v for k, v in with_home.items() if k not in ("HOME", "CUDAENV_ROOT")}
    for args in (["current"], ["which", "nvcc"], ["hook-env", "--shell", "bash"], ["env", "--shell", "fish"]):
        programs, proc = execs(args, with_home, tmp)
        check(not any(p.endswith("cudaenv-full") for p in programs), f"{args[0]} with HOME runs itself: {programs}")
        for variant, env in (("unset", without), ("empty", dict(without, HOME="")), ("relative", dict(without, HOME="h"))):
            programs, proc = execs(args, env, tmp)
            check(any(p.endswith("cudaenv-full") for p in programs),
                  f"{args[0]} with HOME {variant} hands over to cudaenv-full: {programs}")
            check("internal error" not in proc.stderr and proc.returncode in (0, 3),
                  f"{args[0]} with HOME {variant} answers: {proc.returncode} {proc.stderr!r}")
    # The shim's hook-env hands over too; a tool's shim says what to set.
    shim = Path(BINARY).parent / "cudaenv-shim"
    if not shim.exists():
        shim = Path(BINARY).parent.parent / "libexec" / "cudaenv" / "cudaenv-shim"
    programs, proc = execs(["hook-env", "--shell", "zsh"], without, tmp, program=shim)
    check(proc.returncode == 0 and any(p.endswith("cudaenv-full") for p in programs),
          f"the shim's hook-env hands over: {programs} {proc.stderr!r}")
    link = tmp / "nvcc"
    link.symlink_to(shim)
    proc = subprocess.run([str(link), "--version"], env=without, cwd=tmp, capture_output=True, text=True, timeout=60)
    check(proc.returncode == 2 and "HOME is unset or not an absolute path" in proc.stderr and
          proc.stderr.count("\n") == 2, f"a tool's shim says what to set: {proc.returncode} {proc.stderr!r}")


finish()
