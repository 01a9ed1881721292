"""SIGINT, SIGTERM and SIGHUP end every long command the same way: an install downloading from a
slow mirror, an install waiting on another install's lock, `mirror create`, `sync`. Each exits
128 + the signal (130, 143, 129) with one "interrupted by" line, and leaves no staging directory
and no owner file; a rerun is not kept waiting (the lock was released)."""

import os
import signal
import socket
import subprocess
import time

from framework_wheels import framework_index
from harness import check, finish, mirror_server
from install_helpers import (NVCC, PATIENCE, case, check_toolkit_runs, env_for, finished, start,
                             toolkit_names)
from synthetic_mirror import PLATFORM, toolkit_release
from synthetic_wheels import cuda13_release, write_wheel

SIGNALS = ((signal.SIGHUP, 129, "SIGHUP"), (signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM"))


def slow_release(tmp, root="mirror", padding=300_000):
    """12.4.1 with a padded nvcc archive; returns the archive's URL path (the one to slow down)."""
    manifest = toolkit_release(tmp / root, "12.4.1", NVCC, padding=padding)
    return f"/cuda/redist/{manifest['cuda_nvcc'][PLATFORM]['relative_path']}"


def wait_for(condition, what):
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def leftovers(root):
    """Staging directories and owner files anywhere below the data root."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.name.startswith((".staging-", ".replaced-")) or p.name.endswith((".owner", ".break")))


def check_stopped(proc, code, name, what):
    check(proc.returncode == code, f"{what}: exit {proc.returncode}, expected {code}: {proc.stderr}")
    lines = [line for line in proc.stderr.splitlines() if line.startswith("cudaenv: error:")]
    check(len(lines) == 1 and f"interrupted by {name}" in lines[0], f"{what}: one line says so: {proc.stderr}")


def stderr_file_says(path, needle):
    return lambda: path.exists() and needle in path.read_text()


@case
def a_signal_during_an_install_removes_staging_and_owner_files(tmp):
    for signum, code, name in SIGNALS:
        case_dir = tmp / name
        case_dir.mkdir()
        nvcc = slow_release(case_dir)
        cached = case_dir / "root" / "cache" / "downloads" / os.path.basename(nvcc)
        env = env_for(case_dir)
        with mirror_server(case_dir / "mirror", {nvcc: {"delay": 0.3}}) as (url, faults):
            proc = start(["install", "12.4.1", "--mirror", url], env)
            wait_for(lambda: cached.exists() and cached.stat().st_size > 0, "the download to start")
            check(any(n.startswith(".staging-") for n in toolkit_names(case_dir)), "staging is under way")
            proc.send_signal(signum)
            finished(proc, f"an install after {name}")
            check_stopped(proc, code, name, f"install, {name}")
            check(toolkit_names(case_dir) == [".lock-12.4.1"], f"{name}: staging removed: {toolkit_names(case_dir)}")
            check(leftovers(case_dir / "root") == [], f"{name}: nothing left: {leftovers(case_dir / 'root')}")
            faults.write_text("{}")
            rerun = finished(start(["install", "12.4.1", "--mirror", url], env), "the rerun")
            check(rerun.returncode == 0 and "waiting" not in rerun.stderr, f"{name}: lock released: {rerun.stderr}")
        check_toolkit_runs(case_dir, env, "12.4.1", [f"V{NVCC}"])


@case
def a_signal_while_waiting_on_another_installs_lock_ends_the_wait(tmp):
    nvcc = slow_release(tmp, padding=2_000_000)  # the holder takes 30 s or more: it ends by SIGHUP
    env = env_for(tmp)
    owner = tmp / "root" / "toolkits" / "..lock-12.4.1.owner"
    with mirror_server(tmp / "mirror", {nvcc: {"delay": 1.0}}) as (url, faults):
        holder = start(["install", "12.4.1", "--mirror", url], env)
        # The owner file is created, then written: wait for its content, not its name.
        wait_for(lambda: owner.exists() and "start" in owner.read_text(),
                 "the first install to take the lock")
        held_by = owner.read_text()
        for signum, code, name in SIGNALS:
            err = tmp / f"waiter-{name}.err"
            with open(err, "w") as stream:
                waiter = subprocess.Popen([os.environ["CUDAENV_BIN"], "install", "12.4.1", "--mirror", url],
                                          env=env, stdout=subprocess.DEVNULL, stderr=stream, text=True)
                wait_for(stderr_file_says(err, "waiting for another"), f"the second install to wait ({name})")
                started = time.monotonic()
                waiter.send_signal(signum)
                try:
                    waiter.wait(timeout=PATIENCE)
                except subprocess.TimeoutExpired:
                    waiter.kill()
                    raise AssertionError(f"the waiting install ignored {name}")
            waiter.stderr = err.read_text()
            check_stopped(waiter, code, name, f"a waiting install, {name}")
            check(time.monotonic() - started < 5, f"{name} ended the wait at once")
            check(owner.exists() and owner.read_text() == held_by, f"{name}: the holder's owner file is untouched")
            check(holder.poll() is None, f"{name}: the holder goes on")
        holder.send_signal(signal.SIGHUP)
        finished(holder, "the holder after SIGHUP")
        check_stopped(holder, 129, "SIGHUP", "the holder")
        check(toolkit_names(tmp) == [".lock-12.4.1"], f"nothing left of either: {toolkit_names(tmp)}")
        check(leftovers(tmp / "root") == [], f"no owner file left: {leftovers(tmp / 'root')}")


@case
def a_signal_during_mirror_create_lists_nothing_and_exits_as_the_signal(tmp):
    nvcc = slow_release(tmp, "upstream")
    for signum, code, name in SIGNALS:
        out = tmp / f"mirror-{name}"
        partial = out / nvcc.lstrip("/")
        env = env_for(tmp)
        with mirror_server(tmp / "upstream", {nvcc: {"delay": 0.3}}) as (url, _):
            proc = start(["mirror", "create", str(out), "--cuda", "12.4.1", "--mirror", url], env)
            wait_for(lambda: partial.exists() and partial.stat().st_size > 0, "the copy to start")
            proc.send_signal(signum)
            finished(proc, f"mirror create after {name}")
        check_stopped(proc, code, name, f"mirror create, {name}")
        check(not (out / "cuda" / "redist" / "redistrib_12.4.1.json").exists(),
              f"{name}: the release is not listed by a mirror missing its archives")
        check(not (out / "cudaenv" / "db" / "index.json").exists(), f"{name}: nothing more was published")


@case
def ctrl_c_during_the_repack_of_a_mirror_from_an_index_leaves_no_partial_mirror(tmp):
    """`mirror create --source pypi`: the wheels are downloaded, then repacked into xz archives
    under temporary names; Ctrl-C while a large one is being repacked ends it with 130 and leaves
    no temporary archive, no manifest listing the release and no published database."""
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    big = next(wheels.glob("nvidia_cublas-*.whl"))
    big.unlink()  # cuBLAS again, with 48 MiB of incompressible data: its repack takes seconds
    write_wheel(wheels, "nvidia-cublas", "13.1.0.3",
                {"nvidia/cu13/lib/libcublas.so.13": (os.urandom(48 << 20), 0o644)})
    out = tmp / "mirror"
    env = env_for(tmp)
    with framework_index(wheels) as (base, _):
        proc = start(["mirror", "create", str(out), "--cuda", "13.0.2", "--source", "pypi",
                      "--index-url", f"{base}/simple"], env)
        wait_for(lambda: any(p.name.startswith("libcublas-") and ".partial-" in p.name for p in out.rglob("*"))
                 or proc.poll() is not None, "the repack of cuBLAS to start")
        proc.send_signal(signal.SIGINT)
        finished(proc, "mirror create --source pypi after SIGINT")
    check_stopped(proc, 130, "SIGINT", "mirror create --source pypi")
    partial = [str(p) for p in out.rglob("*") if ".partial-" in p.name]
    check(not partial, f"no temporary archive left: {partial}")
    check(not (out / "cuda" / "redist" / "redistrib_13.0.2.json").exists(),
          "the release is not listed by a mirror missing its archives")
    check(not (out / "cudaenv" / "db" / "index.json").exists(), "nothing more was published")
    check(leftovers(tmp / "root") == [], f"nothing left in the store: {leftovers(tmp / 'root')}")


@case
def a_sighup_during_sync_stops_it_like_install(tmp):
    nvcc = slow_release(tmp)
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.4"\n[targets.a100]\ndriver = "535.104.05"\narch = ["8.0"]\n')
    env = env_for(tmp)
    cached = tmp / "root" / "cache" / "downloads" / os.path.basename(nvcc)
    with mirror_server(tmp / "mirror", {nvcc: {"delay": 0.3}}) as (url, _):
        proc = subprocess.Popen([os.environ["CUDAENV_BIN"], "sync", "--mirror", url], env=env, cwd=project,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: cached.exists() and cached.stat().st_size > 0 or proc.poll() is not None,
                 "sync to download")
        proc.send_signal(signal.SIGHUP)
        finished(proc, "sync after SIGHUP")
    check_stopped(proc, 129, "SIGHUP", "sync")
    check("12.4.1" not in toolkit_names(tmp), f"nothing installed: {toolkit_names(tmp)}")
    check(leftovers(tmp / "root") == [], f"nothing left: {leftovers(tmp / 'root')}")


finish()
