"""Helpers shared by the install hardening tests: run cudaenv against a synthetic mirror with
a temporary data root, wait for it with a bound, and check what is (and is not) installed."""

import json
import os
import subprocess

from harness import BINARY, case as run_case, check, clean_env, run
from synthetic_mirror import PLATFORM, write_release

NVCC = "12.4.131"
TOP = f"cuda_nvcc-{PLATFORM}-{NVCC}-archive"
ARCHIVE_PATH = f"/cuda/redist/cuda_nvcc/{PLATFORM}/{TOP}.tar.xz"
PATIENCE = 45  # seconds: generous; a hang would be forever


def case(function):
    """Runs the case, unless CUDAENV_TEST_ONLY names others (a part of their names)."""
    only = os.environ.get("CUDAENV_TEST_ONLY", "")
    return run_case(function) if only in function.__name__ else function


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, **{"CUDAENV_ROOT": tmp / "root", "CUDAENV_SYSROOT": tmp / "sysroot",
                             "CUDAENV_HTTP_BACKOFF_MS": 20, **extra})


def start(args, env, **popen):
    return subprocess.Popen([BINARY, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)


def finished(proc, what):
    """Waits for `proc` (at most PATIENCE seconds: a hang fails the test instead of blocking it)."""
    try:
        proc.stdout_text, proc.stderr = proc.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"{what} did not end within {PATIENCE} s")
    return proc


def release_with(tmp, entries, version="12.4.1"):
    """A release whose nvcc archive carries a working nvcc plus `entries`."""
    return write_release(tmp / "mirror", version, {
        "cuda_nvcc": (NVCC, [("bin/nvcc", "#!/bin/sh\necho nvcc " + NVCC + "\n", 0o755), *entries], 0),
        "cuda_cudart": ("12.4.127", [("lib/libcudart.so.12", "elf", 0o644)], 0),
    })


def toolkit_names(tmp):
    directory = tmp / "root" / "toolkits"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def check_nothing_of(tmp, version):
    names = toolkit_names(tmp)
    check(version not in names, f"no {version} visible: {names}")
    check(not any(n.startswith((".staging-", ".replaced-", ".old-")) for n in names), f"nothing left aside: {names}")


def check_toolkit_runs(tmp, env, version, nvcc_versions):
    listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)
    versions = [t["version"] for t in listed["installed"]]
    check(version in versions, f"cudaenv list shows {version}: {listed}")
    nvcc = tmp / "root" / "toolkits" / version / "bin" / "nvcc"
    try:
        out = subprocess.run([str(nvcc)], capture_output=True, text=True, timeout=PATIENCE).stdout
    except OSError as error:  # missing, or no longer a program
        out = str(error)
    check(any(v in out for v in nvcc_versions), f"{version}'s nvcc runs: {out!r}")


def json_of(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def requests(faults, path):
    log = faults.parent / (faults.name + ".log")
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 2)[2] for line in lines if line.split(" ", 2)[1] == path]


