"""Install errors name their real cause and the way out: a mirror this machine cannot reach (an
offline machine: a mirror URL on a closed loopback port), a mirror that carries no cuDNN or not
the cuDNN asked for (a cuDNN hint, not a CUDA one), and a store the user cannot write (whose it
is, and CUDAENV_ROOT / sudo / the administrator). Mirrors are served over HTTP on 127.0.0.1."""

import os
import shutil
import socket
import subprocess

from harness import BINARY, case, check, clean_env, expect_error, finish, mirror_server, run
from synthetic_mirror import cudnn_release, toolkit_release


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot",
                     CUDAENV_HTTP_ATTEMPTS=2, CUDAENV_HTTP_BACKOFF_MS=10, **extra)


def closed_port():
    """A loopback port nothing listens on: what an unreachable mirror looks like from here."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hint_of(proc):
    return next((line for line in proc.stderr.splitlines() if line.startswith("hint:")), "")


def requests(faults):
    log = faults.parent / (faults.name + ".log")
    return log.read_text().splitlines() if log.exists() else []


@case
def an_unreachable_mirror_names_where_it_was_set_and_how_to_work_offline(tmp):
    url = f"http://127.0.0.1:{closed_port()}"
    for args, extra, origin in ((["--mirror", url], {}, "set by --mirror"),
                                ([], {"CUDAENV_MIRROR": url}, "set by CUDAENV_MIRROR")):
        proc = run(["install", "12.4", *args], env_for(tmp, **extra))
        expect_error(proc, 5, url, f"(mirror {origin})")
        hint = hint_of(proc)
        for needle in ("--mirror", "CUDAENV_MIRROR", "cudaenv mirror create DIR --cuda VERSION", "file://DIR"):
            check(needle in hint, f"{needle!r} in the hint: {proc.stderr}")
    missing = tmp / "no-such-mirror"
    proc = run(["install", "12.4", "--mirror", str(missing)], env_for(tmp))
    expect_error(proc, 5, str(missing), "(mirror set by --mirror)")
    check("cudaenv mirror create" in hint_of(proc), proc.stderr)


@case
def a_mirror_without_cudnn_gets_a_cudnn_hint_before_anything_is_installed(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, faults):
        proc = run(["install", "12.4.1", "--cudnn", "9", "--mirror", url], env_for(tmp))
        expect_error(proc, 3, "this mirror carries no cuDNN", "/cudnn/redist/")
        hint = hint_of(proc)
        check("--cudnn VERSION" in hint and "cudaenv mirror create" in hint and "leave out --cudnn" in hint, proc.stderr)
        check("CUDA version" not in proc.stderr, f"no CUDA advice for a cuDNN problem: {proc.stderr}")
        archives = [line for line in requests(faults) if ".tar.xz" in line]
        check(archives == [], f"no toolkit downloaded for an install that cannot finish: {archives}")
        check(not (tmp / "root" / "toolkits" / "12.4.1").exists(), "nothing installed")


@case
def a_cudnn_release_the_mirror_lacks_lists_those_it_has(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run(["install", "12.4.1", "--cudnn", "8.9", "--mirror", url], env_for(tmp))
        expect_error(proc, 3, 'no cuDNN release matching "8.9" with a cuda12 build')
        check("cuDNN releases there: 9.1.0" in hint_of(proc) and "--cudnn VERSION" in hint_of(proc), proc.stderr)


def as_another_user(tmp):
    """Runs cudaenv as `nobody` when the tests run as root (so a root-owned store is someone
    else's); else None, and the store is made read-only for its owner instead."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    os.chmod(tmp, 0o755)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BINARY]


def run_as(prefix, args, env):
    return subprocess.run([*(prefix or [BINARY]), *args], env=env, capture_output=True, text=True, timeout=60)


@case
def a_store_you_cannot_write_says_whose_it_is_and_what_to_do(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    prefix = as_another_user(tmp)
    store = tmp / "root"
    with mirror_server(tmp / "mirror") as (url, faults):
        env = env_for(tmp)
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        if prefix is None:
            os.chmod(store / "toolkits", 0o555)
        before = len(requests(faults))
        proc = run_as(prefix, ["install", "12.4.1", "--force", "--mirror", url], env)
        if prefix is None:
            expect_error(proc, 1, f"cannot write {store}/toolkits", "is yours but not writable (mode 0555)")
            check(f"chmod u+w {store}/toolkits" in hint_of(proc), proc.stderr)
        else:
            expect_error(proc, 1, f"{store}/cache/downloads belongs to root and you are nobody")
            for needle in ("CUDAENV_ROOT", "sudo", "ask the administrator"):
                check(needle in hint_of(proc), f"{needle!r} in the hint: {proc.stderr}")
        check(len(requests(faults)) == before, f"refused before asking the mirror: {requests(faults)[before:]}")
        removal = run_as(prefix, ["uninstall", "12.4.1"], env)
        expect_error(removal, 1, f"cannot remove {store}/toolkits/12.4.1")
        check("CUDAENV_ROOT" in hint_of(removal), removal.stderr)
        check((store / "toolkits" / "12.4.1" / "bin" / "nvcc").exists(), "the toolkit is still there")
        os.chmod(store / "toolkits", 0o755)


finish()
