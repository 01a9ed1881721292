"""`cudaenv jupyter install` writes a kernelspec whose env selects the project's toolkit: a real
ipykernel, started by jupyter_client (both from PyPI), sees the project's CUDA_HOME and runs its
nvcc; `use` and `rehash` carry the kernelspec to the project's new toolkit. docs/jupyter.md."""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from harness import SKIP, case, check, expect_error, finish, install_synthetic_toolkits, run_in

PIP_CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE") or Path.home() / ".cache" / "cudaenv-tests") / "pip"
# Starts the kernelspec named argv[1] as a notebook server would, runs argv[2] in it and prints
# what it wrote to stdout, then shuts it down.
KERNEL_DRIVER = """
import sys
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name=sys.argv[1], startup_timeout=90)
out = []
def keep(message):
    if message["msg_type"] == "stream":
        out.append(message["content"]["text"])
    elif message["msg_type"] == "error":
        out.append("ERROR " + message["content"]["ename"] + ": " + message["content"]["evalue"])
try:
    kc.execute_interactive(sys.argv[2], output_hook=keep, timeout=90)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
print("".join(out), end="")
"""
READ_TOOLKIT = ("import os, subprocess\n"
                "print('CUDA_HOME=' + os.environ.get('CUDA_HOME', ''))\n"
                "print(subprocess.run(['nvcc', '--version'], capture_output=True, text=True).stdout)\n")

_venv = []


def pypi_reachable():
    try:
        with urllib.request.urlopen("https://pypi.org/simple/ipykernel/", timeout=15) as reply:
            return reply.status == 200
    except OSError:
        return False


def kernel_venv():
    """One virtualenv with ipykernel and jupyter_client from PyPI for every case (the wheels are
    cached, so a rerun installs offline); skips the file when PyPI cannot be reached."""
    if _venv:
        return _venv[0]
    if not pypi_reachable():
        print("skip: PyPI is unreachable: ipykernel and jupyter_client cannot be installed")
        sys.exit(SKIP)
    root = Path(tempfile.mkdtemp(prefix="cudaenv-jupyter-venv-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--cache-dir",
                    str(PIP_CACHE), "ipykernel", "jupyter_client"], check=True, timeout=600)
    _venv.append(venv)
    return venv


def server_env(env):
    """The environment a notebook server runs in: the system's nvcc first on PATH when this machine
    has one, and CUDA_HOME naming it, so a kernel that ignored its kernelspec would show it."""
    served = dict(env)
    system_nvcc = shutil.which("nvcc", path=env["PATH"]) or shutil.which("nvcc")
    if system_nvcc:
        served["PATH"] = f"{Path(system_nvcc).parent}:{env['PATH']}"
        served["CUDA_HOME"] = str(Path(system_nvcc).resolve().parent.parent)
    else:
        served["CUDA_HOME"] = "/usr/local/cuda"
    return served


def in_kernel(venv, name, env, code=READ_TOOLKIT):
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", KERNEL_DRIVER, name, code],
                          env=server_env(env), capture_output=True, text=True, timeout=300)
    check(proc.returncode == 0, f"the kernel ran: {proc.stdout}\n{proc.stderr}")
    return proc.stdout


def kernel_json(tmp, name):
    return json.loads((tmp / ".local" / "share" / "jupyter" / "kernels" / name / "kernel.json").read_text())


@case
def the_kernel_sees_the_projects_toolkit_and_follows_use_and_rehash(tmp):
    venv = kernel_venv()
    env = install_synthetic_toolkits(tmp)
    env["VIRTUAL_ENV"] = str(venv)
    project = tmp / "My Project"
    project.mkdir()
    run_in(["use", "12.1"], env, project, expect=0)
    installed = run_in(["jupyter", "install"], env, project, expect=0)
    check("installed Jupyter kernel cudaenv-my-project (CUDA 12.1.1" in installed.stdout, installed.stdout)
    spec = kernel_json(tmp, "cudaenv-my-project")
    check(spec["argv"] == [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
          f"argv: {spec['argv']}")
    toolkit = tmp / "root" / "toolkits" / "12.1.1"
    check(spec["env"]["CUDA_HOME"] == str(toolkit), f"env: {spec['env']}")
    check(spec["env"]["PATH"].split(":")[0] == f"{toolkit}/bin", spec["env"]["PATH"])
    check(spec["env"]["LD_LIBRARY_PATH"].split(":")[0] == f"{toolkit}/lib64", spec["env"]["LD_LIBRARY_PATH"])
    check(spec["metadata"]["cudaenv"]["project"] == str(project), f"metadata: {spec['metadata']}")

    seen = in_kernel(venv, "cudaenv-my-project", env)
    check(f"CUDA_HOME={toolkit}\n" in seen, f"the kernel's CUDA_HOME: {seen!r}")
    check("release 12.1, V12.1.105" in seen, f"the kernel's nvcc: {seen!r}")

    changed = run_in(["use", "12.4"], env, project, expect=0)
    check("Jupyter kernel cudaenv-my-project now uses CUDA 12.4.1" in changed.stdout, changed.stdout)
    seen = in_kernel(venv, "cudaenv-my-project", env)
    check(f"CUDA_HOME={tmp}/root/toolkits/12.4.1\n" in seen, f"after use 12.4: {seen!r}")
    check("release 12.4, V12.4.131" in seen, f"after use 12.4, nvcc: {seen!r}")

    # A kernelspec edited by hand: rehash puts the toolkit's variables back, keeps the user's own.
    path = tmp / ".local" / "share" / "jupyter" / "kernels" / "cudaenv-my-project" / "kernel.json"
    edited = json.loads(path.read_text())
    edited["env"]["CUDA_HOME"] = "/opt/stale"
    edited["env"]["MY_SETTING"] = "${HOME}/data"
    edited["display_name"] = "Mine"
    path.write_text(json.dumps(edited))
    rehashed = run_in(["rehash"], env, tmp, expect=0)
    check("Jupyter kernel cudaenv-my-project now uses CUDA 12.4.1" in rehashed.stdout, rehashed.stdout)
    spec = kernel_json(tmp, "cudaenv-my-project")
    check(spec["env"]["CUDA_HOME"] == f"{tmp}/root/toolkits/12.4.1", f"rehash: {spec['env']}")
    check(spec["env"]["MY_SETTING"] == "${HOME}/data" and spec["display_name"] == "Mine",
          f"the user's own settings stay: {spec}")
    quiet = run_in(["rehash"], env, tmp, expect=0)
    check("Jupyter kernel" not in quiet.stdout, f"nothing to refresh, nothing said: {quiet.stdout}")

    listed = run_in(["jupyter", "list"], env, tmp, expect=0)
    check(listed.stdout.startswith(f"cudaenv-my-project  CUDA 12.4.1  {project}  "), listed.stdout)
    run_in(["jupyter", "uninstall", "cudaenv-my-project"], env, tmp, expect=0)
    check(not path.exists(), "uninstall removes the kernelspec")
    check(run_in(["jupyter", "list"], env, tmp, expect=0).stdout == "", "and its registry entry")
    expect_error(run_in(["jupyter", "uninstall", "cudaenv-my-project"], env, tmp), 3, "cudaenv-my-project")


@case
def python3_on_path_and_a_named_kernel_in_jupyter_data_dir(tmp):
    venv = kernel_venv()
    env = install_synthetic_toolkits(tmp)
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter-data")
    (tmp / "proj").mkdir()
    run_in(["use", "12.4"], env, tmp / "proj", expect=0)
    run_in(["jupyter", "install", "--name", "CUDA-12.4_a.b"], env, tmp / "proj", expect=0)
    spec = json.loads((tmp / "jupyter-data" / "kernels" / "cuda-12.4_a.b" / "kernel.json").read_text())
    check(spec["argv"][0] == str(venv / "bin" / "python3"), f"python3 from PATH: {spec['argv']}")
    seen = in_kernel(venv, "cuda-12.4_a.b", env)
    check("release 12.4, V12.4.131" in seen, f"the named kernel's nvcc: {seen!r}")


@case
def bad_names_and_no_project_are_refused_before_anything_is_written(tmp):
    env = install_synthetic_toolkits(tmp)
    (tmp / "proj").mkdir()
    run_in(["use", "12.4"], env, tmp / "proj", expect=0)
    for bad in ["bad name", "../up", "x" * 65, "ké"]:
        expect_error(run_in(["jupyter", "install", "--name", bad], env, tmp / "proj"), 2, "--name")
    check(not (tmp / ".local" / "share" / "jupyter").exists(), "nothing written for a bad name")
    (tmp / "elsewhere").mkdir()
    outside = run_in(["jupyter", "install"], env, tmp / "elsewhere")
    expect_error(outside, 2, "no .cudaenv", str(tmp / "elsewhere"))
    check("hint: pin a version first (cudaenv use 12.4)" in outside.stderr, outside.stderr)
    plain = tmp / "plain-venv"  # a Python without ipykernel
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(plain)], check=True, timeout=120)
    expect_error(run_in(["jupyter", "install"], dict(env, VIRTUAL_ENV=str(plain)), tmp / "proj"), 3,
                 "cannot import ipykernel", str(plain / "bin" / "python"))
    check(not (tmp / ".local" / "share" / "jupyter").exists(), "nothing written without ipykernel")
    bare = dict(env, PATH="/nonexistent", VIRTUAL_ENV=str(tmp / "no-venv"))
    expect_error(run_in(["jupyter", "install"], bare, tmp / "proj"), 3, "VIRTUAL_ENV")
    expect_error(run_in(["jupyter", "install"], dict(env, JUPYTER_DATA_DIR="rel"), tmp / "proj"), 2,
                 "JUPYTER_DATA_DIR")


finish()
