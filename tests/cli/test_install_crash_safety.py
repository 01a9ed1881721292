"""`cudaenv install` when the process or the disk fails it: a write that fails mid-extraction
(file size limit, a full disk; a full disk under `mirror create` too), a kill -9 at any instant
of `install --force` (held at its renames with strace), a swap that fails, and Ctrl-C/SIGTERM in
the middle."""

import resource
import os
import re
import shutil
import signal
import subprocess
import time

from harness import BINARY, check, expect_error, finish, mirror_server, run
from install_helpers import (ARCHIVE_PATH, NVCC, PATIENCE, case, check_nothing_of, check_toolkit_runs, env_for,
                             finished, release_with, requests, start, toolkit_names)
from synthetic_mirror import PLATFORM, toolkit_release, write_release


# 1. A write that fails mid-extraction.

# A file that compresses to a few KiB but cannot be written under 1 MiB (not zeros: libarchive
# would leave holes for those, which take no space).
ZEROS = 4 << 20


def file_size_limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec: writes fail with EFBIG


@case
def a_write_failure_during_extraction_fails_the_install_and_leaves_nothing(tmp):
    toolkit_release(tmp / "mirror", "12.1.1", "12.1.105")
    release_with(tmp, [("share/zeros.bin", b"cuda" * (ZEROS // 4), 0o644)])
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.1.1", "--mirror", url], env, check_exit=0)
        proc = finished(start(["install", "12.4.1", "--mirror", url], env, preexec_fn=file_size_limit),
                        "an install whose writes fail")
        expect_error(proc, 1, "share/zeros.bin", "File too large")
        check_nothing_of(tmp, "12.4.1")
        check_toolkit_runs(tmp, env, "12.1.1", ["V12.1.105"])


@case
def a_full_disk_during_extraction_fails_the_install_and_leaves_nothing(tmp):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skipped: a real full disk needs root and unshare (tmpfs in a mount namespace)")
        return
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=1m none {tmp}"],
                           capture_output=True)
    if probe.returncode != 0:
        print("skipped: mount -t tmpfs in a mount namespace does not work here")
        return
    toolkit_release(tmp / "mirror", "12.1.1", "12.1.105")
    release_with(tmp, [("share/zeros.bin", b"cuda" * (ZEROS // 4), 0o644)])
    (tmp / "root").mkdir()
    (tmp / "out").mkdir()
    with mirror_server(tmp / "mirror") as (url, _):
        # The data root is a 2 MiB tmpfs that exists only in this namespace: every step runs there.
        script = (f'mount -t tmpfs -o size=2m none "{tmp}/root" || exit 99\n'
                  f'"{BINARY}" install 12.1.1 --mirror {url} >/dev/null 2>&1 || exit 98\n'
                  f'"{BINARY}" install 12.4.1 --mirror {url} 2>"{tmp}/out/err"; echo $? >"{tmp}/out/rc"\n'
                  f'ls -a "{tmp}/root/toolkits" >"{tmp}/out/names"\n'
                  f'"{tmp}/root/toolkits/12.1.1/bin/nvcc" >"{tmp}/out/nvcc"\n')
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env_for(tmp), capture_output=True,
                              text=True, timeout=PATIENCE)
    check(proc.returncode == 0, f"the namespace script ran: {proc.returncode} {proc.stderr}")
    rc = int((tmp / "out" / "rc").read_text())
    err = (tmp / "out" / "err").read_text()
    check(rc == 1, f"exit {rc}: {err}")
    # The write that failed is named: usually zeros.bin's, but archives download and extract in
    # parallel, so whichever file's write met the full disk first (another extracted file, or an
    # archive in the download cache) is the one. (When the extraction's failure went unnoticed,
    # libarchive padded the file out with a hole and the install went on: it failed at the
    # receipt only when no page had been freed by then, and otherwise installed a file of zeros
    # in part.)
    errors = [line for line in err.splitlines() if line.startswith("cudaenv: error:")]
    named = errors[0] if len(errors) == 1 else ""
    written = (rf"{re.escape(str(tmp / 'root'))}/(toolkits/\.staging-12\.4\.1-[0-9]+|cache/downloads|"
               rf"cache/unpacked/\.partial-[0-9a-f]{{64}}\.\w+-[0-9]+)/\S+")
    check(re.search(rf"{written}: No space left on device", named), f"names the file and the reason: {err!r}")
    names = (tmp / "out" / "names").read_text().split()
    check(sorted(names) == [".", "..", ".lock-12.1.1", ".lock-12.4.1", "12.1.1"], f"only 12.1.1: {names}")
    check("V12.1.105" in (tmp / "out" / "nvcc").read_text(), "the earlier toolkit still runs")


@case
def a_full_disk_under_mirror_create_fails_it_and_lists_no_release(tmp):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skipped: a real full disk needs root and unshare (tmpfs in a mount namespace)")
        return
    # An archive of whole pages and a part: its last part waits in stdio's buffer until the end.
    manifest = write_release(tmp / "mirror", "12.4.1", {"cuda_nvcc": (NVCC, [], 20_000)})
    archive = os.path.basename(manifest["cuda_nvcc"][PLATFORM]["relative_path"])
    pages = int(manifest["cuda_nvcc"][PLATFORM]["size"]) // 4096
    (tmp / "out").mkdir()
    with mirror_server(tmp / "mirror") as (url, _):
        # `pages` pages: the archive's last part finds no room; one more: the archive fits, its manifest not.
        script = "".join(f'mkdir "{tmp}/{n}" && mount -t tmpfs -o size={n * 4}k none "{tmp}/{n}" || exit 99\n'
                         f'"{BINARY}" mirror create "{tmp}/{n}" --cuda 12.4.1 --components cuda_nvcc --mirror {url} '
                         f'2>"{tmp}/out/err{n}"; echo $? >"{tmp}/out/rc{n}"\n'
                         f'find "{tmp}/{n}" -name "redistrib_*" >"{tmp}/out/listed{n}"\n' for n in (pages, pages + 1))
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env_for(tmp), capture_output=True, text=True,
                              timeout=PATIENCE)
    check(proc.returncode == 0, f"the namespace script ran: {proc.returncode} {proc.stderr}")
    for n, failed in ((pages, archive), (pages + 1, "redistrib_12.4.1.json")):
        rc, err = (tmp / "out" / f"rc{n}").read_text().strip(), (tmp / "out" / f"err{n}").read_text()
        errors = [line for line in err.splitlines() if line.startswith("cudaenv: error:")]
        check(rc == "1" and len(errors) == 1 and f"{failed}: No space left on device" in errors[0],
              f"{n} pages: exit {rc}, names {failed} and the reason: {err!r}")
        listed = (tmp / "out" / f"listed{n}").read_text().split()
        check(listed == [], f"{n} pages: no manifest lists the release: {listed}")


# 6. `install --force` keeps a toolkit in place at every instant.

def strace_usable():
    """strace is installed and may trace here (a container can forbid ptrace)."""
    return bool(shutil.which("strace")) and subprocess.run(["strace", "-o", "/dev/null", "true"]).returncode == 0


def rename_pauses(log):
    """Lines of the strace log for rename calls held back by the injected delay."""
    return [line for line in (log.read_text().splitlines() if log.exists() else []) if "(DELAYED)" in line]


def traced_force_install(tmp, url, env, kill_at_pause):
    """`install --force` under strace, each rename held back 3 s; kill -9 at the given pause."""
    log = tmp / f"strace-{kill_at_pause}.log"
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", str(log), "-e", "trace=rename,renameat,renameat2",
                               "-e", "inject=rename,renameat,renameat2:delay_exit=3000000",
                               BINARY, "install", "12.4.1", "--force", "--mirror", url],
                              env={**env, "ASAN_OPTIONS": "detect_leaks=0"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + PATIENCE
    while len(rename_pauses(log)) < kill_at_pause and tracer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    pauses = rename_pauses(log)
    if len(pauses) >= kill_at_pause:
        os.kill(int(pauses[kill_at_pause - 1].split()[0]), signal.SIGKILL)
    tracer.wait(timeout=PATIENCE)
    return pauses[:kill_at_pause]


@case
def a_kill_at_any_instant_of_a_forced_reinstall_leaves_a_working_toolkit(tmp):
    if not strace_usable():
        print("skipped: strace (to hold the install at its renames) is not usable here")
        return
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        toolkit_release(tmp / "mirror", "12.4.1", "12.4.132")  # the mirror republished the release
        for moment in (1, 2):  # the first rename of the reinstall (the swap), and any after it
            paused = traced_force_install(tmp, url, env, moment)
            if moment > 1 and len(paused) < moment:
                break  # the reinstall finished with no further rename: nothing more to kill at
            check(len(paused) == moment, f"killed at rename {moment}: {paused}")
            check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131", "V12.4.132"])
        # Killed mid-download: the toolkit in place stays.
        shutil.rmtree(tmp / "root" / "cache" / "downloads")
        with mirror_server(tmp / "mirror", {ARCHIVE_PATH.replace("12.4.131", "12.4.132"): {"delay": 1}}) as (slow, _):
            proc = start(["install", "12.4.1", "--force", "--mirror", slow], env)
            deadline = time.monotonic() + PATIENCE
            while f".staging-12.4.1-{proc.pid}" not in toolkit_names(tmp) and time.monotonic() < deadline:
                time.sleep(0.01)
            proc.kill()
            proc.communicate()
            check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131", "V12.4.132"])
        run(["install", "12.4.1", "--force", "--mirror", url], env, check_exit=0)
        check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.132"])
        check(toolkit_names(tmp) == [".lock-12.4.1", "12.4.1"], f"nothing left aside: {toolkit_names(tmp)}")


@case
def a_failed_swap_keeps_the_old_toolkit(tmp):
    if not strace_usable():
        print("skipped: strace (to make the swap fail) is not usable here")
        return
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        toolkit_release(tmp / "mirror", "12.4.1", "12.4.132")
        # No exchange in one step (as on a filesystem without RENAME_EXCHANGE), and the second
        # rename fails: the one that moves the new prefix in after the old one stepped aside.
        proc = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2",
                               "-e", "inject=renameat2:error=ENOSYS", "-e", "inject=rename:error=EIO:when=2",
                               BINARY, "install", "12.4.1", "--force", "--mirror", url],
                              env={**env, "ASAN_OPTIONS": "detect_leaks=0"}, capture_output=True, text=True,
                              timeout=PATIENCE)
        expect_error(proc, 1, "cannot replace", "toolkits/12.4.1", "Input/output error")
        check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131"])
        check(toolkit_names(tmp) == [".lock-12.4.1", "12.4.1"], f"nothing left aside: {toolkit_names(tmp)}")
        # Killed between the two renames: the next install of the version puts the old one back.
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", str(tmp / "aside.log"),
                                   "-e", "trace=rename,renameat,renameat2", "-e", "inject=renameat2:error=ENOSYS",
                                   "-e", "inject=rename:delay_exit=3000000:when=1",
                                   BINARY, "install", "12.4.1", "--force", "--mirror", url],
                                  env={**env, "ASAN_OPTIONS": "detect_leaks=0"},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + PATIENCE
        while not rename_pauses(tmp / "aside.log") and tracer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        pauses = rename_pauses(tmp / "aside.log")
        check(len(pauses) == 1, f"held at the first rename: {pauses}")
        if pauses:
            os.kill(int(pauses[0].split()[0]), signal.SIGKILL)
        tracer.wait(timeout=PATIENCE)
        proc = run(["install", "12.4.1", "--mirror", url], env)
        check(proc.returncode == 0 and "already installed" in proc.stdout, f"found in place: {proc.stdout}{proc.stderr}")
        check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131"])


# 7. Ctrl-C and SIGTERM.

def interrupted_install(tmp, signum, code, name):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", NVCC, padding=300_000)
    nvcc = f"/cuda/redist/{manifest['cuda_nvcc'][PLATFORM]['relative_path']}"
    cached = tmp / "root" / "cache" / "downloads" / os.path.basename(nvcc)
    env = env_for(tmp)
    with mirror_server(tmp / "mirror", {nvcc: {"delay": 0.3}}) as (url, faults):
        proc = start(["install", "12.4.1", "--mirror", url], env)
        deadline = time.monotonic() + PATIENCE
        while not (cached.exists() and cached.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signum)
        finished(proc, f"an install after {name}")
        check(proc.returncode == code, f"exit {proc.returncode}, expected {code}: {proc.stderr}")
        check(f"interrupted by {name}" in proc.stderr, proc.stderr)
        check(toolkit_names(tmp) == [".lock-12.4.1"], f"staging removed: {toolkit_names(tmp)}")
        partial = cached.stat().st_size
        check(partial > 0, "the bytes downloaded are kept")
        faults.write_text("{}")
        before = len(requests(faults, nvcc))
        rerun = finished(start(["install", "12.4.1", "--mirror", url], env), "the rerun")
        check(rerun.returncode == 0 and "waiting" not in rerun.stderr, f"the lock was released: {rerun.stderr}")
        check(requests(faults, nvcc)[before:] == [f"bytes={partial}-"],
              f"resumed from byte {partial}: {requests(faults, nvcc)[before:]}")
        check_toolkit_runs(tmp, env, "12.4.1", [f"V{NVCC}"])


@case
def ctrl_c_removes_the_staging_directory_and_exits_130(tmp):
    interrupted_install(tmp, signal.SIGINT, 130, "SIGINT")


@case
def sigterm_removes_the_staging_directory_and_exits_143(tmp):
    interrupted_install(tmp, signal.SIGTERM, 143, "SIGTERM")


finish()
