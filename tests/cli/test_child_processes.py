"""Programs cudaenv runs cannot hang it or outlive it: a probed compiler that hangs after starting
a helper that keeps its output open is stopped, helper and all, at the probe's timeout, and
cudaenv answers."""

import json
import os
import signal
import subprocess
import time

from harness import BINARY, case, check, clean_env, finish

# A "compiler" that starts a helper holding the output pipe, then hangs itself.
HANGING_COMPILER = """#!/bin/sh
sleep 300 &
echo $! > "{pids}/helper"
echo $$ > "{pids}/compiler"
exec sleep 300
"""


def running(pid):
    """Still running: listed, and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def stopped_within(pid, seconds):
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(pid)


@case
def a_hanging_probe_and_the_helper_it_started_are_stopped(tmp):
    bin_dir, pids = tmp / "bin", tmp / "pids"
    bin_dir.mkdir()
    pids.mkdir()
    compiler = bin_dir / "gcc-99"
    compiler.write_text(HANGING_COMPILER.format(pids=pids))
    compiler.chmod(0o755)
    env = clean_env(tmp, PATH=f"{bin_dir}:/usr/bin:/bin")
    proc = None
    try:
        proc = subprocess.run([BINARY, "info", "--json"], env=env, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        check(False, "cudaenv info hung: the helper of a timed-out probe kept its output open")
    started = {name: (pids / name).read_text().strip()
               for name in ("compiler", "helper") if (pids / name).exists()}
    check(set(started) == {"compiler", "helper"}, f"the probe ran: {started}")
    for name, pid in started.items():
        check(stopped_within(pid, 10), f"the {name} (pid {pid}) outlived the probe's timeout")
        if running(pid):
            os.kill(int(pid), signal.SIGKILL)
    if proc is None:
        return
    check(proc.returncode == 0, f"info exited {proc.returncode}: {proc.stderr}")
    compilers = {c["name"]: c for c in json.loads(proc.stdout)["compilers"]}
    check("gcc-99" in compilers and compilers["gcc-99"]["version"] is None,
          f"the hanging compiler is listed without a version: {compilers.get('gcc-99')}")

if __name__ == "__main__":
    finish()
