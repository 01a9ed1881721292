"""`cudaenv install --jobs N` unpacks archives on several threads, and libarchive sets the
process umask to 0 and back around every entry it writes. Two threads interleaving there once
left the process at umask 0: the store's shims directory came out world-writable and the next
install refused the data root. Held apart by strace (each umask call delayed), the threads must
never interleave, and nothing the install creates may be writable by others."""

import os
import re
import stat
import subprocess

from harness import BINARY, check, finish, mirror_server, run
from install_helpers import PATIENCE, case, env_for
from synthetic_mirror import nvcc_script, write_release

COMPONENTS = ("cuda_nvcc", "cuda_cudart", "cuda_cccl", "cuda_nvrtc")
UMASK_CALL = re.compile(r"^(\d+)\s+umask\((\d+)")


def many_archives(mirror, release):
    """A release of four archives of 40 entries each, so four threads unpack at once."""
    components = {}
    for name in COMPONENTS:
        entries = [(f"include/{name}/h{i}.h", "/* header */\n", 0o644) for i in range(40)]
        if name == "cuda_nvcc":
            entries.append(("bin/nvcc", nvcc_script(release, "13.0.88"), 0o755))
        components[name] = ("13.0.88", entries, 0)
    write_release(mirror, release, components)


def writable_by_others(root):
    found = []
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and mode & (stat.S_IWGRP | stat.S_IWOTH):
                found.append(f"{path} {oct(mode & 0o7777)}")
    return found


def interleaved_umask_calls(log):
    """Places where another thread's call came between a umask(0) and the call that restores."""
    lines = [line for line in log.splitlines() if "umask" in line]
    problems = []
    for index, line in enumerate(lines):
        if "unfinished" in line or "resumed" in line:
            problems.append(line)
            continue
        opened = UMASK_CALL.match(line)
        if not opened or opened.group(2) != "000":
            continue
        following = UMASK_CALL.match(lines[index + 1]) if index + 1 < len(lines) else None
        if not following or following.group(1) != opened.group(1):
            problems.append(f"{line} / next: {lines[index + 1] if index + 1 < len(lines) else 'nothing'}")
    return problems


def strace_usable():
    """strace is installed, may trace here and can delay a call (a container can forbid it)."""
    try:
        return subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "inject=umask:delay_exit=1000",
                               "true"], capture_output=True).returncode == 0
    except OSError:
        return False


@case
def unpacking_threads_never_interleave_their_umask_changes(tmp):
    if not strace_usable():
        print("skipped: strace (to hold the threads at their umask calls) is not usable here")
        return
    many_archives(tmp / "mirror", "13.0.2")
    # LeakSanitizer (in the test build) cannot run under ptrace.
    options = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
    env = env_for(tmp, ASAN_OPTIONS=options)
    log = tmp / "umask.log"
    with mirror_server(tmp / "mirror") as (url, _):
        # Each umask call is held back 1 ms: without the lock another thread would almost surely
        # come in between.
        traced = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e", "trace=umask",
                                 "-e", "inject=umask:delay_exit=1000",
                                 BINARY, "install", "13.0.2", "--mirror", url, "--jobs", "4"],
                                env=env, capture_output=True, text=True, timeout=PATIENCE * 4)
    check(traced.returncode == 0, f"the install succeeds under strace: {traced.stderr}")
    text = log.read_text()
    calls = text.count("umask(")
    check(calls >= 4 * 40, f"the trace saw the threads' umask calls ({calls})")
    problems = interleaved_umask_calls(text)
    check(not problems, "no thread changes the umask while another has it at 0:\n" + "\n".join(problems[:5]))


@case
def nothing_a_parallel_install_creates_is_writable_by_others(tmp):
    mirror = tmp / "mirror"
    for release in ("13.0.1", "13.0.2"):
        many_archives(mirror, release)
    env = env_for(tmp)
    with mirror_server(mirror) as (url, _):
        for attempt, release in enumerate(("13.0.1", "13.0.2")):
            run(["install", release, "--mirror", url, "--jobs", "4"], env, check_exit=0)
            found = writable_by_others(tmp / "root")
            check(not found, f"install {attempt + 1}: nothing group- or world-writable:\n" + "\n".join(found[:5]))
    listed = run(["list"], env, check_exit=0).stdout
    check("13.0.1" in listed and "13.0.2" in listed, f"both releases are installed:\n{listed}")


finish()
