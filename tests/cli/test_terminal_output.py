#!/usr/bin/env python3
"""Terminal manners, through a real pseudo-terminal: progress only on a terminal, colour only on a
terminal and never with NO_COLOR, and `--quiet`/`-q` (anywhere on the line) drops progress and
notes but never the results asked for or an error."""

import os
import pty
import select
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness import BINARY, case, check, clean_env, expect_error, finish, mirror_server, run  # noqa: E402
from synthetic_mirror import toolkit_release  # noqa: E402

ESCAPE = "\x1b["


def run_on_terminal(args, env, timeout=60):
    """Runs cudaenv with stdin, stdout and stderr on one pseudo-terminal; (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(BINARY, [BINARY, *args], env)
    output, deadline = b"", time.time() + timeout
    while time.time() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")


def terminal_env(tmp, name, **extra):
    return clean_env(tmp, CUDAENV_ROOT=tmp / name, TERM="xterm", **extra)


@case
def progress_on_a_terminal_only_and_never_under_quiet(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=256 * 1024)
    with mirror_server(tmp / "mirror") as (url, _):
        code, shown = run_on_terminal(["install", "12.4.1", "--mirror", url], terminal_env(tmp, "tty"))
        check(code == 0, f"installed on a terminal: {shown!r}")
        check("total" in shown and ESCAPE + "2K" in shown, f"live progress on a terminal: {shown!r}")
        check("installed CUDA 12.4.1" in shown, f"the result line: {shown!r}")

        piped = run(["install", "12.4.1", "--mirror", url], terminal_env(tmp, "pipe"), check_exit=0)
        check(ESCAPE not in piped.stderr and "total" not in piped.stderr,
              f"no progress into a pipe: {piped.stderr!r}")
        check("installed CUDA 12.4.1" in piped.stdout, f"the result line: {piped.stdout!r}")

        for quiet in (["-q", "install", "12.4.1"], ["install", "12.4.1", "--quiet"]):
            code, shown = run_on_terminal([*quiet, "--mirror", url], terminal_env(tmp, "quiet" + quiet[0]))
            check(code == 0, f"{quiet}: installed: {shown!r}")
            check("total" not in shown and ESCAPE not in shown, f"{quiet}: no progress: {shown!r}")
            check("installed CUDA 12.4.1" in shown, f"{quiet}: the result is still printed: {shown!r}")


@case
def quiet_never_hides_errors_or_data(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = terminal_env(tmp, "root")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run(["install", "12.9.9", "--mirror", url, "-q"], env)
        expect_error(proc, 3, "12.9.9")
        run(["install", "12.4.1", "--mirror", url, "-q"], env, check_exit=0)
        # After exec's command, -q is the command's own argument, not cudaenv's.
        ran = run(["-q", "exec", "--", "echo", "-q", "x"], env, check_exit=0)
        check(ran.stdout == "-q x\n", f"exec passes -q on: {ran.stdout!r}")
        expect_error(run(["exec", "echo", "-q"], env), 2)
        listed = run(["list", "-q"], env, check_exit=0)
        check("12.4.1" in listed.stdout, f"the list is data, printed under --quiet: {listed.stdout!r}")
        # The hint after `mirror create` is a note: on stderr, and not under --quiet.
        made = run(["mirror", "create", str(tmp / "m1"), "--cuda", "12.4.1", "--mirror", url], env,
                   check_exit=0)
        check("mirrored cuda 12.4.1" in made.stdout, f"the result: {made.stdout!r}")
        check("serve it" in made.stderr, f"the note: {made.stderr!r}")
        made = run(["-q", "mirror", "create", str(tmp / "m2"), "--cuda", "12.4.1", "--mirror", url], env,
                   check_exit=0)
        check("mirrored cuda 12.4.1" in made.stdout, f"the result under -q: {made.stdout!r}")
        check(made.stderr == "", f"no note under -q: {made.stderr!r}")


@case
def colour_on_a_terminal_unless_no_color(tmp):
    code, shown = run_on_terminal(["list"], terminal_env(tmp, "root"))
    check(code == 0, f"list ran: {shown!r}")
    check(ESCAPE + "1mInstalled by cudaenv" in shown, f"a bold heading on a terminal: {shown!r}")
    code, shown = run_on_terminal(["list"], terminal_env(tmp, "root", NO_COLOR="1"))
    check(code == 0 and "Installed by cudaenv" in shown and ESCAPE not in shown,
          f"no colour with NO_COLOR: {shown!r}")
    piped = run(["list"], terminal_env(tmp, "root"), check_exit=0)
    check(ESCAPE not in piped.stdout, f"no colour into a pipe: {piped.stdout!r}")
    code, shown = run_on_terminal(["list", "--quiet"], terminal_env(tmp, "root", NO_COLOR="1"))
    check(code == 0 and "Installed by cudaenv" in shown and ESCAPE not in shown,
          f"--quiet keeps the listing: {shown!r}")


finish()
