"""`cudaenv scan` and `cudaenv why` on hostile files and trees: crafted libraries (a real shared
library built here with cc, its tables then pointed by the thousand at one long string, the
way a 1.9 MB file once asked for 60 GB), a crafted ld.so cache, nested fatbinary containers, a
tree 8000 directories deep, FIFOs, sockets and unreadable files. Every run is held to 1 GiB
(RLIMIT_AS, or ASan's hard RSS limit in the sanitizer build, where the address space is not a
measure) and must end quickly with a clear message."""

import json
import mmap
import os
import resource
import socket
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from harness import BINARY, case, check, clean_env, finish
from scan_hostile import (dynsym_bomb, ld_cache_bomb, nested_containers, needed_bomb, real_library,
                          section_name_bomb, with_fatbin)

LIMIT_MB = 1024
SANITIZED = None


def sanitized():
    """Whether the binary under test carries AddressSanitizer (it reserves terabytes of address
    space, so RLIMIT_AS cannot hold it; its own RSS limit does)."""
    global SANITIZED
    if SANITIZED is None:
        with open(BINARY, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as image:
            SANITIZED = image.find(b"__asan_init") >= 0
    return SANITIZED


def bounded_run(args, env, as_user=None, timeout=120):
    """cudaenv ARGS held to LIMIT_MB of memory; returns (proc-like result, peak RSS in MiB, seconds)."""
    env = dict(env)
    if sanitized():
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), f"hard_rss_limit_mb={LIMIT_MB}"]))

    def limit():
        if not sanitized():
            resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MB << 20, LIMIT_MB << 20))
        if as_user is not None:
            os.setgid(as_user)
            os.setuid(as_user)

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen([BINARY, *args], env=env, stdout=out, stderr=err, preexec_fn=limit)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
        timer.cancel()
        seconds = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
    return result, usage.ru_maxrss / 1024, seconds


def check_bounded(proc, peak_mb, seconds, what):
    check(proc.returncode in (0, 1), f"{what}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    check("internal error" not in proc.stderr and "terminate" not in proc.stderr, f"{what}: {proc.stderr[-2000:]}")
    check(peak_mb < LIMIT_MB / 2, f"{what}: peak RSS {peak_mb:.0f} MiB")
    check(seconds < 60, f"{what}: took {seconds:.1f} s")


# --- the cases ---------------------------------------------------------------------------------

def scan_env(tmp):
    (tmp / "home").mkdir(exist_ok=True)
    return clean_env(tmp / "home")


@case
def crafted_string_tables_cost_no_more_than_the_file(tmp):
    base = real_library(tmp)
    site = tmp / "site"
    site.mkdir()
    section_name_bomb(base, site / "libsections.so")
    needed_bomb(base, site / "libneeded.so")
    with_fatbin(base, site / "libgood.so")
    env = scan_env(tmp)
    for name in ("libsections.so", "libneeded.so"):
        check((site / name).stat().st_size < 2_200_000, f"{name}: {(site / name).stat().st_size} bytes")
    proc, peak, seconds = bounded_run(["scan", str(site), "--arch", "8.0"], env)
    check_bounded(proc, peak, seconds, "scan of crafted string tables")
    check(proc.returncode == 0, proc.stdout + proc.stderr)
    for name, table in (("libsections.so", "section name table"), ("libneeded.so", "dynamic string table")):
        block = proc.stdout.split(str(site / name), 1)[-1].split("\n\n", 1)[0]
        check(f"unreadable: not a valid ELF: the names in the {table} would be read over and over" in block,
              f"{name}: {proc.stdout}")
    check("compute_80 (PTX 8.0)" in proc.stdout, f"the good library beside them is still read: {proc.stdout}")


@case
def nested_fatbinary_containers_are_read_a_bounded_number_of_times(tmp):
    base = real_library(tmp)
    site = tmp / "site"
    site.mkdir()
    with_fatbin(base, site / "libnested.so", ldata=nested_containers(250000))  # 16 MB
    proc, peak, seconds = bounded_run(["scan", str(site), "--arch", "8.0", "--json"], scan_env(tmp))
    check_bounded(proc, peak, seconds, "scan of nested containers")
    check(proc.returncode == 0, proc.stdout + proc.stderr)
    check("would be read over and over" in proc.stdout and ".ldata" in proc.stdout, proc.stdout[-3000:])
    check('"compute_80"' in proc.stdout, f"the .nv_fatbin entry is still reported: {proc.stdout[-3000:]}")


@case
def a_crafted_ld_cache_and_symbol_table_in_why(tmp):
    # An ld.so cache whose 40 000 entries all name one 1 MiB string, under CUDAENV_SYSROOT.
    root = tmp / "machine"
    (root / "etc").mkdir(parents=True)
    (root / "etc/ld.so.cache").write_bytes(ld_cache_bomb())
    # A libcudnn.so.9 whose .dynsym holds 40 000 symbols named by one 1 MiB string.
    lib = tmp / "lib"
    lib.mkdir()
    dynsym_bomb(real_library(tmp, soname="libcudnn.so.9"), lib / "libcudnn.so.9")
    env = clean_env(tmp / "home", CUDAENV_SYSROOT=root, LD_LIBRARY_PATH=lib, PATH="/usr/bin:/bin")
    (tmp / "home").mkdir()
    proc, peak, seconds = bounded_run(["why", "libcudnn.so.9"], env)
    check_bounded(proc, peak, seconds, "why with a crafted cache and library")
    check("ld.so cache not read" in proc.stderr and "names a string longer than 255 bytes" in proc.stderr,
          proc.stderr)
    check(f"Loads      {lib / 'libcudnn.so.9'}" in proc.stdout, proc.stdout)


def make_deep_tree(top, levels):
    """`levels` nested directories below `top`, made through directory descriptors (their paths
    are far longer than PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    os.close(fd)


def remove_deep_tree(top):
    """Removes a chain made by make_deep_tree one level at a time from the top (shutil.rmtree
    recurses and would pass Python's recursion limit)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while os.path.exists(os.path.join(top, "d")):
            if os.path.exists(os.path.join(top, "d", "d")):
                os.rename("d/d", "up", src_dir_fd=fd, dst_dir_fd=fd)
                os.rmdir("d", dir_fd=fd)
                os.rename("up", "d", src_dir_fd=fd, dst_dir_fd=fd)
            else:
                os.rmdir("d", dir_fd=fd)
    finally:
        os.close(fd)


@case
def a_tree_8000_directories_deep(tmp):
    base = real_library(tmp)
    site = tmp / "site"
    (site / "pkg").mkdir(parents=True)
    with_fatbin(base, site / "pkg/libgood.so")
    make_deep_tree(site / "pkg", 8000)
    try:
        proc, peak, seconds = bounded_run(["scan", str(site), "--arch", "8.0"], scan_env(tmp))
        check_bounded(proc, peak, seconds, "scan of a deep tree")
        check(proc.returncode == 0, proc.stdout + proc.stderr)
        check(f"warning: {site}/pkg/d/d/" in proc.stderr and "more than 64 directories below" in proc.stderr
              and "the depth limit of a scan" in proc.stderr, proc.stderr[-2000:])
        check("compute_80 (PTX 8.0)" in proc.stdout, proc.stdout)
    finally:
        remove_deep_tree(site / "pkg")


@case
def fifos_sockets_and_unreadable_files_are_named(tmp):
    base = real_library(tmp)
    site = tmp / "site"
    site.mkdir()
    with_fatbin(base, site / "libgood.so")
    with_fatbin(base, site / "liblocked.so")
    (site / "liblocked.so").chmod(0)
    os.mkfifo(site / "libpipe.so")  # opening it for reading would block until a writer came
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(site / "socket.so"))
    # As root every file is readable: the scan then runs as nobody.
    as_user = 65534 if os.geteuid() == 0 else None
    if as_user is not None:
        for path in (tmp, site, site / "libgood.so"):
            path.chmod(path.stat().st_mode | stat.S_IRWXU | stat.S_IROTH | stat.S_IXOTH)
        (tmp / "home").mkdir()
        os.chown(tmp / "home", as_user, as_user)
    env = scan_env(tmp)
    try:
        proc, peak, seconds = bounded_run(["scan", str(site), "--arch", "8.0"], env, as_user=as_user, timeout=60)
        check_bounded(proc, peak, seconds, "scan of special and unreadable files")
        check(f"note: {site / 'libpipe.so'} (a FIFO): not a regular file, not opened" in proc.stderr, proc.stderr)
        check(f"note: {site / 'socket.so'} (a socket): not a regular file, not opened" in proc.stderr, proc.stderr)
        check("1 with GPU code or CUDA libraries, 1 unreadable, 2 special files skipped" in proc.stdout, proc.stdout)
        locked = proc.stdout.split(str(site / "liblocked.so"), 1)[-1].split("\n\n", 1)[0]
        check("unreadable: cannot be read: Permission denied" in locked, proc.stdout)
        proc, _, _ = bounded_run(["scan", str(site), "--arch", "8.0", "--json"], env, as_user=as_user, timeout=60)
        check(proc.returncode == 0, proc.stdout + proc.stderr)
        report = json.loads(proc.stdout)
        check(report["special_count"] == 2 and report["unreadable_files"] == 1, report)
        locked = [b for b in report["binaries"] if b["path"].endswith("liblocked.so")]
        check(len(locked) == 1 and locked[0].get("unreadable") is True, report["binaries"])
    finally:
        listener.close()


finish()
