"""Install locks that hold across hosts (a store on NFS, where flock may lock only one host):
beside the lock file, an owner file created with O_EXCL names the holder's host, pid and time.
Two installers meeting a stale one left by a dead host: one takes it over and says so, both
finish, the toolkit is installed once. A live holder on another host is waited for. A holder on
this host whose process is gone is taken over at once; so is one whose pid now names another
process (a pid reused: that process started after the owner file was written, or the host
restarted since, by its boot id), while a pid still running since before the file was written
is waited for."""

import os
import socket
import subprocess
import time

from harness import check, finish
from install_helpers import case, check_toolkit_runs, env_for, finished, start, toolkit_names
from harness import mirror_server
from synthetic_mirror import toolkit_release


def owner_file(tmp):
    return tmp / "root" / "toolkits" / "..lock-12.4.1.owner"


def plant_owner(tmp, host, pid, age_seconds, extra=""):
    toolkits = tmp / "root" / "toolkits"
    toolkits.mkdir(parents=True, exist_ok=True)
    (toolkits / ".lock-12.4.1").write_text("")
    started = int(time.time()) - age_seconds
    owner_file(tmp).write_text(f"host={host}\npid={pid}\nstarted={started}\n{extra}")
    os.utime(owner_file(tmp), (started, started))


def this_boot():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def dead_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@case
def two_installers_take_over_a_dead_hosts_lock(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    plant_owner(tmp, "deadhost.example", 4242, age_seconds=3600)
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        both = [finished(p, "an installer") for p in (start(["install", "12.4.1"], env), start(["install", "12.4.1"], env))]
    for proc in both:
        check(proc.returncode == 0, f"installer exit {proc.returncode}: {proc.stderr}")
    notes = [p.stderr for p in both if "took over the lock" in p.stderr]
    check(len(notes) == 1, f"one installer took the stale lock over: {[p.stderr for p in both]}")
    if notes:
        for needle in ("pid 4242", "host deadhost.example", "has not refreshed it for 60 minutes"):
            check(needle in notes[0], f"the note names {needle}: {notes[0]}")
    check(toolkit_names(tmp) == [".lock-12.4.1", "12.4.1"], f"installed once, nothing aside: {toolkit_names(tmp)}")
    check(not owner_file(tmp).exists(), "the owner file is gone with its holder")
    check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131"])


@case
def a_live_holder_on_another_host_is_waited_for(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    plant_owner(tmp, "otherhost.example", 777, age_seconds=0)
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        with open(tmp / "err", "w") as err:
            proc = subprocess.Popen([os.environ["CUDAENV_BIN"], "install", "12.4.1"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=err)
            deadline = time.monotonic() + 45
            while "waiting for another" not in (tmp / "err").read_text() and time.monotonic() < deadline \
                    and proc.poll() is None:
                time.sleep(0.05)
            waited = "waiting for another" in (tmp / "err").read_text()
            check(waited, f"the installer waits: {(tmp / 'err').read_text()}")
            check("12.4.1" not in toolkit_names(tmp), f"nothing installed while held: {toolkit_names(tmp)}")
            owner_file(tmp).unlink()  # the other host finishes
            try:
                proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise AssertionError("the installer did not go on after the release")
    check(proc.returncode == 0, f"then it installs: {(tmp / 'err').read_text()}")
    check("took over" not in (tmp / "err").read_text(), "a live lock is never taken over")
    check("12.4.1" in toolkit_names(tmp), f"installed: {toolkit_names(tmp)}")


@case
def a_dead_process_on_this_host_is_taken_over_at_once(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    pid = dead_pid()
    plant_owner(tmp, socket.gethostname(), pid, age_seconds=0)
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        proc = finished(start(["install", "12.4.1"], env), "the installer")
    check(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
    check(f"of pid {pid} on host {socket.gethostname()}" in proc.stderr and "that process is gone" in proc.stderr,
          f"says whose lock it took over: {proc.stderr}")
    check("12.4.1" in toolkit_names(tmp), f"installed: {toolkit_names(tmp)}")


def install_past_a_reused_pid(tmp, age_seconds, extra, reason):
    """An owner file naming a live `sleep` (not its holder): the install takes it over, within a
    bounded time, and says why."""
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        time.sleep(0.1)
        plant_owner(tmp, socket.gethostname(), sleeper.pid, age_seconds, extra)
        with mirror_server(tmp / "mirror") as (url, _):
            env = env_for(tmp, CUDAENV_MIRROR=url)
            began = time.monotonic()
            proc = finished(start(["install", "12.4.1"], env), "an install meeting a reused pid")
        check(time.monotonic() - began < 30, "taken over at once, not after a wait")
        check(sleeper.poll() is None, "the unrelated process is left alone")
    finally:
        sleeper.kill()
        sleeper.wait()
    check(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
    check(f"of pid {sleeper.pid} on host {socket.gethostname()}" in proc.stderr and reason in proc.stderr,
          f"says whose lock it took over and why: {proc.stderr}")
    check("12.4.1" in toolkit_names(tmp), f"installed: {toolkit_names(tmp)}")
    check(not owner_file(tmp).exists(), "the owner file is gone with its holder")


@case
def a_pid_reused_by_a_process_started_after_the_owner_file_is_taken_over(tmp):
    install_past_a_reused_pid(tmp, 3600, "", "is now another process")


@case
def an_owner_file_from_before_the_host_restarted_is_taken_over(tmp):
    # Written just now by its clock, but under another boot id: that pid is not its holder.
    install_past_a_reused_pid(tmp, 0, "boot=00000000-0000-4000-8000-000000000000\n", "this host restarted")


@case
def a_pid_running_since_before_the_owner_file_is_waited_for(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    sleeper = subprocess.Popen(["sleep", "300"])
    time.sleep(1.5)  # the owner file is written well after its holder started
    plant_owner(tmp, socket.gethostname(), sleeper.pid, 0, f"boot={this_boot()}\n")
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        proc = start(["install", "12.4.1"], env)
        try:
            time.sleep(5)
            check(proc.poll() is None, f"the install waits for a live holder: exit {proc.poll()}")
            check("12.4.1" not in toolkit_names(tmp), f"nothing installed while held: {toolkit_names(tmp)}")
        finally:
            sleeper.kill()
            sleeper.wait()
        proc = finished(proc, "the install after its holder ended")
    check(proc.returncode == 0 and "that process is gone" in proc.stderr, f"then taken over: {proc.stderr}")
    check("12.4.1" in toolkit_names(tmp), f"installed: {toolkit_names(tmp)}")


finish()
