"""`cudaenv sync` installs the framework wheels .cudaenv.lock pins into the project's Python
environment (the active virtualenv, or the one `.cudaenv` names with `venv`), through the real
installers: the environment's pip, or uv when it is on PATH (uv from PyPI, installed into a
throwaway virtualenv; its wheel cached under CUDAENV_TEST_CACHE). Each gets a requirements file
with the exact wheel URL and the lock's sha256 (--require-hashes). Served on loopback by
pypi_index.py: a small synthetic `torch` that reports set CUDA and cuDNN versions. Then sync proves
it: the framework imports in the environment with the locked build's CUDA and cuDNN (exit 7 when
not); a wheel whose bytes are not the locked ones is refused by the installer (exit 6); `sync
--frozen` refuses an environment with another torch (exit 1) before installing anything; a
matching install starts no installer."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from framework_wheels import framework_index, torch_wheel
from harness import case, check, clean_env, expect_error, finish, mirror_server, run_in
from module_engines import engines_required
from synthetic_mirror import cudnn_release, toolkit_release

PROJECT = """cuda = "12.4"
{extra}[frameworks]
torch = "2.5"
[targets.h100]
driver = "550.54.15"
arch = ["9.0"]
"""
LOCKED = "2.5.1+cu124"
WHEEL = f"torch-{LOCKED}-py3-none-linux_x86_64.whl"
CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE") or Path.home() / ".cache/cudaenv-ci/downloads")
UV_VERSION = "0.9.5"


def without_uv(path):
    """PATH without any directory that holds a uv: the pip cases must get pip."""
    return ":".join(d for d in path.split(":") if d and not (Path(d) / "uv").exists())


def setup(tmp, extra="", cuda="12.4", cudnn=90100):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")  # the one torch 2.5 cu124 bundles
    torch_wheel(tmp / "wheels", LOCKED, cuda=cuda, cudnn=cudnn)
    torch_wheel(tmp / "wheels", "2.5.0+cu124")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(PROJECT.format(extra=extra))
    (tmp / "sysroot").mkdir()
    return project


def env_for(tmp, mirror, index, **extra):
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_MIRROR=mirror,
                     PWD=tmp / "repo", CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2,
                     CUDAENV_FRAMEWORK_INDEX=f"{index}/whl", PATH=without_uv(os.environ.get("PATH", "/usr/bin:/bin")),
                     UV_CACHE_DIR=tmp / "uv-cache", **extra)


def make_venv(path, pip=True):
    subprocess.run([sys.executable, "-m", "venv", *([] if pip else ["--without-pip"]), str(path)], check=True,
                   capture_output=True, timeout=120)
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


_UV = []


def uv_directory(tmp):
    """A directory holding uv, installed from its PyPI wheel into a throwaway virtualenv; the
    wheel is downloaded once into CUDAENV_TEST_CACHE. None when it cannot be had."""
    if _UV:
        return _UV[0]
    cache = CACHE / "uv"
    wheels = sorted(cache.glob(f"uv-{UV_VERSION}-*.whl"))
    if not wheels:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "--dest", str(cache), f"uv=={UV_VERSION}"], capture_output=True, timeout=300)
        wheels = sorted(cache.glob(f"uv-{UV_VERSION}-*.whl"))
    if not wheels or not zipfile.is_zipfile(wheels[0]):
        _UV.append(None)
        return None
    venv = make_venv(tmp / "uv-venv")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps",
                    str(wheels[0])], check=True, capture_output=True, timeout=300)
    _UV.append(venv / "bin")
    return venv / "bin"


@case
def sync_installs_the_locked_torch_into_the_active_virtualenv_with_pip_and_proves_it(tmp):
    setup(tmp)
    venv = make_venv(tmp / "venv")
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, control):
        env = env_for(tmp, url, index, VIRTUAL_ENV=venv)
        run_in(["lock"], env, tmp / "repo", expect=0)
        proc = sync(tmp, env, expect=0)
        check(f"installed torch {LOCKED} ({WHEEL}, matching the lock's sha256) in {venv} with pip" in proc.stdout,
              proc.stdout + proc.stderr)
        check(f"torch {LOCKED} imports in {venv}: CUDA 12.4, cuDNN 9.1.0, as locked" in proc.stdout, proc.stdout)
        check("pip install torch" not in proc.stdout, "installed, so no line to paste: " + proc.stdout)
        check(torch_in(venv) == LOCKED, torch_in(venv))
        check(f"GET /files/{WHEEL}" in log_of(control), "the wheel came from the index: " + log_of(control))
        requirements = (tmp / "root" / "cache" / "frameworks" / "requirements-torch.txt").read_text()
        check(f"torch @ {index}/files/{WHEEL} --hash=sha256:" in requirements, requirements)
        # A matching install is left alone: no installer runs, nothing is fetched from the index.
        before = log_of(control)
        proc = sync(tmp, env, expect=0)
        check(f"torch {LOCKED} is already installed in {venv}" in proc.stdout, proc.stdout)
        check(f"imports in {venv}: CUDA 12.4, cuDNN 9.1.0, as locked" in proc.stdout, proc.stdout)
        check("installing torch" not in proc.stderr and log_of(control) == before,
              "no installer ran: " + proc.stderr + log_of(control)[len(before):])


@case
def sync_installs_with_uv_when_it_is_on_path_into_the_venv_the_project_names(tmp):
    uv = uv_directory(tmp)
    if uv is None:
        check(not engines_required(), f"uv {UV_VERSION} could not be had from PyPI, and CUDAENV_REQUIRE_ENGINES=1")
        print("skip: uv could not be had")
        return
    setup(tmp, extra='venv = ".venv"\n')
    venv = make_venv(tmp / "repo" / ".venv", pip=False)  # uv needs no pip in it
    elsewhere = make_venv(tmp / "other", pip=False)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index, VIRTUAL_ENV=elsewhere)
        env["PATH"] = f"{uv}:{env['PATH']}"
        run_in(["lock"], env, tmp / "repo", expect=0)
        proc = sync(tmp, env, "--frozen", expect=0)
        check(f"installed torch {LOCKED} ({WHEEL}, matching the lock's sha256) in {venv} with uv" in proc.stdout,
              proc.stdout + proc.stderr)
        check(f"with uv ({uv}/uv)" in proc.stderr, proc.stderr)
        check(f"VIRTUAL_ENV is {elsewhere}; sync installs into the environment .cudaenv names, {venv}" in proc.stderr,
              proc.stderr)
        check(f"imports in {venv}: CUDA 12.4, cuDNN 9.1.0, as locked" in proc.stdout, proc.stdout)
        check(torch_in(venv) == LOCKED and "exit" in torch_in(elsewhere), f"{torch_in(venv)} / {torch_in(elsewhere)}")
        # uv refuses other bytes under the locked name too: a fresh environment, a replaced wheel.
        shutil.rmtree(venv)
        make_venv(venv, pip=False)
        torch_wheel(tmp / "wheels", LOCKED, cuda="11.8")
        proc = sync(tmp, env, "--frozen")
        expect_error(proc, 6, f"torch {LOCKED}: uv refused {WHEEL}", "its sha256 is not the one .cudaenv.lock pins")
        check("exit" in torch_in(venv), "nothing installed: " + torch_in(venv))


@case
def frozen_refuses_an_environment_with_another_torch_and_installs_nothing(tmp):
    setup(tmp)
    venv = make_venv(tmp / "venv")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps",
                    str(torch_wheel(tmp / "older", "2.4.0+cu124"))], check=True, capture_output=True, timeout=120)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, control):
        env = env_for(tmp, url, index, VIRTUAL_ENV=venv)
        run_in(["lock"], env, tmp / "repo", expect=0)
        proc = sync(tmp, env, "--frozen")
        expect_error(proc, 1, f"--frozen: {venv} has torch 2.4.0+cu124, the lock pins {LOCKED}; nothing was installed")
        check("hint: run cudaenv sync without --frozen" in proc.stderr, proc.stderr)
        check(torch_in(venv) == "2.4.0+cu124", torch_in(venv))
        check(not (tmp / "root" / "toolkits" / "12.4.1").exists(), "the toolkit was not installed either")
        check("/files/" not in log_of(control), log_of(control))
        # Without --frozen, sync replaces it with the locked build.
        proc = sync(tmp, env, expect=0)
        check(torch_in(venv) == LOCKED, torch_in(venv) + proc.stdout + proc.stderr)


@case
def a_build_that_reports_another_cuda_or_cudnn_than_the_locked_one_exits_7(tmp):
    for what, wheel, said in (("CUDA", {"cuda": "12.1"}, "reports CUDA 12.1; the locked build is for CUDA 12.4"),
                              ("cuDNN", {"cudnn": 8902}, "reports cuDNN 8.9.2; the locked build is for cuDNN 9.1.0.70")):
        here = tmp / what
        here.mkdir()
        setup(here, **wheel)
        venv = make_venv(here / "venv")
        with mirror_server(here / "mirror") as (url, _), framework_index(here / "wheels") as (index, _):
            env = env_for(here, url, index, VIRTUAL_ENV=venv)
            run_in(["lock"], env, here / "repo", expect=0)
            proc = sync(here, env)
            expect_error(proc, 7, f"torch {LOCKED} in {venv} {said}")


@case
def a_wheel_the_index_replaced_is_refused_by_the_installer_with_exit_6(tmp):
    setup(tmp)
    venv = make_venv(tmp / "venv")
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index, VIRTUAL_ENV=venv)
        run_in(["lock"], env, tmp / "repo", expect=0)
        # Other bytes under the locked name (the index's own page lists their digest, not the lock's).
        torch_wheel(tmp / "wheels", LOCKED, cuda="11.8")
        proc = sync(tmp, env)
        expect_error(proc, 6, f"torch {LOCKED}: pip refused {WHEEL} from {index}/files/{WHEEL}",
                     "its sha256 is not the one .cudaenv.lock pins; nothing was installed")
        check("DO NOT MATCH THE HASHES" in proc.stderr, "pip's own words shown: " + proc.stderr)
        check("exit" in torch_in(venv), "nothing installed: " + torch_in(venv))


@case
def the_venv_key_stays_inside_the_project_and_runs_no_interpreter_that_comes_with_it(tmp):
    setup(tmp, extra='venv = "../outside"\n')
    env = env_for(tmp, "http://127.0.0.1:9", "http://127.0.0.1:9")
    proc = sync(tmp, env)
    expect_error(proc, 2, f"{tmp / 'repo' / '.cudaenv'}:2: venv must be a relative path inside the project")
    (tmp / "repo" / ".cudaenv").write_text(PROJECT.format(extra='venv = ".venv"\n'))
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index)
        run_in(["lock"], env, tmp / "repo", expect=0)
        proc = sync(tmp, env)
        expect_error(proc, 3, f'venv = ".venv": {tmp / "repo" / ".venv" / "bin" / "python"} does not exist')
        check("hint: create the environment (python3 -m venv" in proc.stderr, proc.stderr)
        # A bin/python that the repository itself holds is never run.
        ran = tmp / "ran"
        fake = tmp / "repo" / ".venv" / "bin" / "python"
        fake.parent.mkdir(parents=True)
        fake.write_text(f"#!/bin/sh\ntouch {ran}\n")
        fake.chmod(0o755)
        (tmp / "repo" / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
        proc = sync(tmp, env)
        expect_error(proc, 2, "its bin/python is", "inside the project: sync runs no interpreter that could come "
                     "with the repository")
        check(not ran.exists(), "the repository's python was not run")


@case
def without_an_environment_sync_prints_the_locked_line_and_says_where_it_would_install(tmp):
    setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index)
        run_in(["lock"], env, tmp / "repo", expect=0)
        proc = sync(tmp, env, expect=0)
        check(f"torch {LOCKED} (install it in your Python environment): pip install torch=={LOCKED} "
              "--index-url https://download.pytorch.org/whl/cu124" in proc.stdout, proc.stdout)
        check("no Python environment to install into: activate a virtualenv, or name the project's in .cudaenv "
              '(venv = ".venv")' in proc.stderr, proc.stderr)


finish()
