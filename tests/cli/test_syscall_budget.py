"""The two paths that run on every tool call and every directory change, counted in system calls
(strace), so a regression in their cost is caught by the suite and not by a user's stopwatch:

- a shim call, from its start to the exec of the real tool;
- `hook-env` where nothing needs to change (the project already active), with and without a
  loaded driver and declared [targets].

Each is held to what it must touch: the project file read once, the config looked up once, the
driver's kernel file read once without blocking (a FIFO there must never stall a prompt), no
driver library loaded, and a budget of calls. The budgets are today's counts with a little room;
lower them when the paths get cheaper. Under the sanitizers the dynamic loader and the sanitizer
runtime add their own calls (the loader searches the toolkit's lib64 the activation put on
LD_LIBRARY_PATH), so the budgets are compared in the shipped (release, static) build only; the
per-file checks hold for both."""

import os
import re
import shutil
import subprocess
from pathlib import Path

from harness import (BINARY, SKIP, case, check, finish, fixture_machine, install_synthetic_toolkits)

SHIPPED = os.environ.get("CUDAENV_EXPECT_STATIC") == "1"
STRACE = shutil.which("strace")
PATH_CALLS = {"open", "openat", "stat", "lstat", "newfstatat", "statx", "access", "faccessat",
              "faccessat2", "readlink", "readlinkat", "statfs", "getdents64", "chdir"}
# (calls on files, every call) before the shim execs the tool, and for an unchanged hook-env.
SHIM_BUDGET = (55, 100)
HOOK_BUDGET = (86, 130)
HOOK_TARGETS_BUDGET = (86, 136)

if STRACE is None:
    print("skip: strace is not installed (scripts/deps --test installs it)")
    raise SystemExit(SKIP)


def traced(argv, env, cwd, tmp):
    """The calls the process made (its own pid only: the tool it execs is the same pid, so the
    calls stop at its second execve). Each as (name, first string argument or "", text)."""
    log = tmp / "strace.log"
    # LeakSanitizer cannot run under ptrace; the other checks stay on.
    env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    proc = subprocess.run([STRACE, "-s", "256", "-o", str(log), *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60)
    calls = []
    for line in log.read_text(errors="replace").splitlines():
        match = re.match(r"(\w+)\((.*)", line)
        if not match:
            continue
        name, rest = match.groups()
        if name == "execve" and calls:
            break
        path = re.search(r'"((?:[^"\\]|\\.)*)"', rest)
        calls.append((name, path.group(1) if path else "", line))
    return proc, calls


def file_calls(calls):
    return [call for call in calls if call[0] in PATH_CALLS]


def opens_of(calls, suffix):
    return [call for call in calls if call[0] in ("open", "openat") and call[1].endswith(suffix)]


def within_budget(what, calls, budget):
    files, total = len(file_calls(calls)), len(calls)
    print(f"{what}: {files} calls on files, {total} in all")
    if not SHIPPED:
        print(f"skip part: the budget of {what} (the sanitizer build's loader and runtime add calls)")
        return
    check(files <= budget[0], f"{what}: {files} calls on files, budget {budget[0]}")
    check(total <= budget[1], f"{what}: {total} system calls, budget {budget[1]}")


def no_driver_library(what, calls):
    loaded = [call[1] for call in calls if call[0] in ("open", "openat") and
              re.search(r"lib(nvidia-ml|cuda)\.so", call[1])]
    check(not loaded, f"{what} loads no driver library: {loaded}")


def project(tmp, text):
    env = install_synthetic_toolkits(tmp, PATH="/usr/bin:/bin")
    where = tmp / "project"
    where.mkdir()
    (where / ".cudaenv").write_text(text)
    return env, where


def active_environment(env, where):
    """The environment after the hook applied this directory's selection: hook-env run again
    there has nothing to change."""
    first = subprocess.run([BINARY, "hook-env", "--shell", "bash"], env=env, cwd=where,
                           capture_output=True, text=True, timeout=60)
    check(first.returncode == 0, f"the first hook-env works: {first.stderr}")
    dump = subprocess.run(["bash", "-c", first.stdout + "\nenv -0"], env=env, cwd=where,
                          capture_output=True, timeout=60).stdout
    return dict(entry.split("=", 1) for entry in dump.decode().split("\0") if "=" in entry)


@case
def a_shim_call_reads_the_project_once_and_execs_the_tool(tmp):
    env, where = project(tmp, 'cuda = "12.1"\n[targets.lab]\narch = "9.0"\ndriver = "535"\n')
    shim = tmp / "root" / "shims" / "nvcc"
    proc, calls = traced([str(shim), "--version"], env, where, tmp)
    check("V12.1.105" in proc.stdout, f"the shim ran the project's nvcc: {proc.stdout!r} {proc.stderr}")
    check(len(opens_of(calls, "/project/.cudaenv")) == 1, "the shim opens .cudaenv once")
    check(len(opens_of(calls, "config.toml")) <= 2, "the shim looks for each config file once: "
          f"{[call[1] for call in opens_of(calls, 'config.toml')]}")
    check(not [call for call in calls if "/proc/driver" in call[1] or "/sys/module" in call[1]],
          "the shim does not ask about the driver")
    no_driver_library("the shim", calls)
    within_budget("shim", calls, SHIM_BUDGET)


@case
def an_unchanged_hook_env_costs_its_budget(tmp):
    env, where = project(tmp, 'cuda = "12.1"\n')
    active = active_environment(env, where)
    proc, calls = traced([BINARY, "hook-env", "--shell", "bash"], active, where, tmp)
    check(proc.returncode == 0 and proc.stderr == "", f"hook-env: {proc.returncode} {proc.stderr!r}")
    check("CUDA_HOME" not in proc.stdout, f"nothing to change, nothing exported: {proc.stdout!r}")
    check(len(opens_of(calls, "/project/.cudaenv")) <= 1, "hook-env opens .cudaenv at most once")
    no_driver_library("hook-env", calls)
    within_budget("hook-env, unchanged", calls, HOOK_BUDGET)


@case
def with_a_driver_and_targets_the_kernel_file_is_read_once_without_blocking(tmp):
    machine = fixture_machine("dgx-h100-580", tmp / "machines")
    env, where = project(tmp, 'cuda = "12.1"\n[targets.lab]\narch = "9.0"\ndriver = "535"\n')
    env = dict(env, CUDAENV_SYSROOT=str(machine))
    active = active_environment(env, where)
    proc, calls = traced([BINARY, "hook-env", "--shell", "bash"], active, where, tmp)
    check(proc.returncode == 0, f"hook-env: {proc.returncode} {proc.stderr!r}")
    version = opens_of(calls, "/proc/driver/nvidia/version")
    check(len(version) == 1, f"the kernel file is opened once: {[call[2] for call in version]}")
    check(all("O_NONBLOCK" in call[2] for call in version),
          f"and without blocking: {[call[2] for call in version]}")
    no_driver_library("hook-env with a driver", calls)
    within_budget("hook-env, driver and targets", calls, HOOK_TARGETS_BUDGET)


@case
def a_fifo_as_the_kernel_file_does_not_stall_the_prompt(tmp):
    machine = fixture_machine("dgx-h100-580", tmp / "machines")
    version = machine / "proc" / "driver" / "nvidia" / "version"
    version.unlink()
    os.mkfifo(version)
    env, where = project(tmp, 'cuda = "12.1"\n')
    env = dict(env, CUDAENV_SYSROOT=str(machine))
    try:
        proc = subprocess.run([BINARY, "hook-env", "--shell", "bash"], env=env, cwd=where,
                              capture_output=True, text=True, timeout=20)
        check(proc.returncode == 0 and "CUDA_HOME" in proc.stdout,
              f"hook-env answers with a FIFO as the kernel file: {proc.returncode} {proc.stderr!r}")
    except subprocess.TimeoutExpired:
        check(False, "hook-env blocked on a FIFO at /proc/driver/nvidia/version")


finish()
