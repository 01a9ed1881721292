"""A .cudaenv or config that is not a small regular file (a FIFO, a directory, a link to
/proc/self/pagemap or /proc/kmsg, a 1 GiB sparse file) never blocks or balloons: `cudaenv current`,
`cudaenv env` and the bash prompt hook answer at once with exit 1 (a failure, docs/design.md §4) and
one line naming the file and why, and the shell goes on."""

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from harness import BINARY, case, check, clean_env, finish
from shells import prepare_shell

DEADLINE = 20  # seconds: far beyond an answer, far below "blocked for good"
MEMORY_CEILING = 512 * 1024 * 1024  # bytes of resident memory for cudaenv and its children
REASON = r"(not a regular file|larger than 64 KiB|cannot read)"


def tree_memory(root):
    """Resident bytes of `root` and all its descendants."""
    parents, sizes = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/statm") as f:
                sizes[int(entry)] = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, frontier = 0, [root]
    while frontier:
        pid = frontier.pop()
        total += sizes.get(pid, 0)
        frontier += [child for child, parent in parents.items() if parent == pid]
    return total


def bounded(argv, env, cwd, stdin_text=""):
    """Runs argv; kills it (and reports why) past DEADLINE or MEMORY_CEILING.
    Returns (exit code or None, stdout, stderr, what went wrong or None)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.TemporaryFile("w+") as stdin:
        stdin.write(stdin_text)
        stdin.seek(0)
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin, stdout=out, stderr=err, text=True,
                                start_new_session=True)
        deadline, problem = time.time() + DEADLINE, None
        while proc.poll() is None:
            if time.time() > deadline:
                problem = f"still running after {DEADLINE} s"
            elif tree_memory(proc.pid) > MEMORY_CEILING:
                problem = f"over {MEMORY_CEILING >> 20} MiB of memory"
            if problem:
                os.killpg(proc.pid, 9)
                proc.wait()
                break
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        return (None if problem else proc.returncode), out.read(), err.read(), problem


def hostile_files(tmp):
    """{description: make(path)} for each kind of file that is not a small regular file."""
    def fifo(path):
        os.mkfifo(path)

    def directory(path):
        path.mkdir()

    def sparse(path):
        with open(path, "wb") as f:
            f.truncate(1 << 30)

    def link_to(target):
        return lambda path: path.symlink_to(target)

    kinds = {"a FIFO": fifo, "a directory": directory, "a 1 GiB sparse file": sparse,
             "a link to /proc/self/pagemap": link_to("/proc/self/pagemap")}
    if os.path.exists("/proc/kmsg"):
        kinds["a link to /proc/kmsg"] = link_to("/proc/kmsg")
    return kinds


def expect_refusal(what, result, path, code=1):
    status, out, err, problem = result
    check(problem is None, f"{what}: {problem}")
    check(status == code, f"{what}: exit {status}, expected {code}; stderr: {err[-500:]!r}")
    lines = [line for line in err.splitlines() if line.startswith("cudaenv: error:")]
    check(len(lines) == 1 and str(path) in lines[0] and re.search(REASON, lines[0]),
          f"{what}: one error line naming {path} and why: {err[-500:]!r}")


def expect_hook_survives(what, result, path):
    status, out, err, problem = result
    check(problem is None, f"{what}: the bash hook: {problem}")
    check("alive" in out and "still here" in out, f"{what}: the shell goes on: {out[-300:]!r} {err[-300:]!r}")
    lines = [line for line in err.splitlines() if str(path) in line and re.search(REASON, line)]
    check(len(lines) == 1, f"{what}: the hook names the file once: {err[-800:]!r}")


@case
def a_cudaenv_that_is_not_a_small_regular_file_is_refused_at_once(tmp):
    (tmp / "root").mkdir()
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    for i, (what, make) in enumerate(hostile_files(tmp).items()):
        project = tmp / f"project-{i}"
        project.mkdir()
        path = project / ".cudaenv"
        make(path)
        for args in (["current"], ["env", "--shell", "bash"]):
            expect_refusal(f"{what}: cudaenv {args[0]}", bounded([BINARY, *args], env, project), path)
        argv, shell_env = prepare_shell("bash", tmp, env)
        script = f"cd '{project}'\necho alive\ntrue\ncd /\necho still here\nexit\n"
        expect_hook_survives(what, bounded(argv, shell_env, tmp, script), path)


@case
def a_config_that_is_a_fifo_is_refused_at_once(tmp):
    (tmp / "root").mkdir()
    config = tmp / "config" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True)
    os.mkfifo(config)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", XDG_CONFIG_HOME=tmp / "config")
    for args in (["current"], ["env", "--shell", "bash"]):
        expect_refusal(f"config FIFO: cudaenv {args[0]}", bounded([BINARY, *args], env, tmp), config)
    argv, shell_env = prepare_shell("bash", tmp, env)
    expect_hook_survives("config FIFO", bounded(argv, shell_env, tmp, "echo alive\ntrue\necho still here\nexit\n"),
                         config)
    # A normal project beside it still works: the config is read only where no .cudaenv applies.
    (tmp / "p").mkdir()
    (tmp / "p" / ".cudaenv").write_text("12.4\n")
    status, _, err, problem = bounded([BINARY, "current"], env, tmp / "p")
    check(problem is None and status == 3 and "12.4" in err, f"the project's pin applies: {status} {err!r}")


finish()
