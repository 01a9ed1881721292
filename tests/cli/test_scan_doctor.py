"""`cudaenv doctor`'s PyTorch check on this machine with a real virtual environment first on PATH.
A venv's python3 is a link to the base interpreter: run through the link's target it sees the
base's packages, so torch installed in the venv read as "torch is not installed". The torch here is
a small real package tree in the venv (a CUDA build of torch is gigabytes), answering what the
probe asks: its version, torch.version.cuda and the arch flags of its build."""

import json
import shutil
import sys
import tempfile
import atexit
from pathlib import Path

from harness import FAKE_DRIVER, case, check, clean_env, finish, fixture_machine, run
from scan_fixtures import build_cuda_libraries, find_cuda_tool, make_venv

NVCC = find_cuda_tool("nvcc")
OLD_PTXAS = Path(__import__("os").environ.get("CUDAENV_TEST_CACHE", Path.home() / ".cache/cudaenv-ci/downloads")) \
    / "debian-apt/cuda-11.8-root/usr/bin/ptxas"

TORCH_INIT = """
from . import version, _C, cuda
__version__ = "2.11.0+cu130"
"""


def venv_with_torch(tmp, init=TORCH_INIT):
    python, site = make_venv(tmp / "venv")
    torch = site / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text(init)
    (torch / "version.py").write_text('cuda = "13.0"\n')
    (torch / "_C.py").write_text('def _cuda_getArchFlags():\n    return "sm_80 sm_90 sm_100 sm_120"\n')
    (torch / "cuda.py").write_text("def get_arch_list():\n    return []\n")
    (tmp / "home").mkdir()
    return python, clean_env(tmp / "home", PATH=f"{python.parent}:/usr/bin:/bin")


def pytorch_finding(proc):
    report = json.loads(proc.stdout)
    return next(f for f in report["findings"] if f["id"] == "framework")


@case
def torch_in_the_active_venv_is_found(tmp):
    python, env = venv_with_torch(tmp)
    finding = pytorch_finding(run(["doctor", "--json"], env))
    check("not installed" not in finding["summary"], finding)
    check(any(e.startswith(str(python)) for e in finding["evidence"]), finding["evidence"])
    check("torch 2.11.0+cu130, torch.version.cuda 13.0" in finding["evidence"], finding["evidence"])


@case
def a_broken_torch_is_not_reported_missing(tmp):
    _, env = venv_with_torch(tmp, "import a_module_torch_needs_but_is_missing\n")
    finding = pytorch_finding(run(["doctor", "--json"], env))
    check("not installed" not in finding["summary"], finding)
    check("a_module_torch_needs_but_is_missing" in finding["summary"], finding)


def machine_with_venv(tmp, machine):
    """A fixture machine (its python3 a stand-in script) with a venv at /opt/venv whose python3
    links to it, first on PATH: doctor reads that venv's site-packages from the files."""
    root = fixture_machine(machine, tmp / "machines")
    site = root / "opt/venv/lib/python3.12/site-packages"
    site.mkdir(parents=True)
    (root / "opt/venv/bin").mkdir()
    (root / "opt/venv/bin/python3").symlink_to("../../../usr/bin/python3")
    (root / "opt/venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", CUDAENV_SYSROOT=root, PATH="/opt/venv/bin:/usr/bin:/bin")
    return root, site, env


def findings(env):
    report = json.loads(run(["doctor", "--json"], env).stdout)
    return {f["id"]: f for f in report["findings"]}


@case
def framework_binaries_without_the_gpus_code_fail(tmp):
    if not (FAKE_DRIVER and NVCC):
        print("note: needs the fake driver and nvcc; not checked")
        return
    root, site, env = machine_with_venv(tmp, "doctor-healthy-2404")  # H100s, driver 580
    libs = build_cuda_libraries(NVCC, tmp / "built", {"sm80.so": "arch=compute_80,code=sm_80"})
    (site / "torch/lib").mkdir(parents=True)
    shutil.copy(libs["sm80.so"], site / "torch/lib/libtorch_cuda.so")
    found = findings(env)["framework-binaries"]
    check(found["status"] == "fail", found)
    check(found["summary"] == "1 framework binaries have no code a GPU here can run", found)
    check(any(e.endswith("torch/lib/libtorch_cuda.so: no sm_90 SASS and no PTX at or below it")
              for e in found["evidence"]), found["evidence"])
    # Driver 580 runs CUDA 13: the newest wheel with sm_90 SASS the database knows.
    check(any("torch 2.15 cu132: pip install torch --index-url https://download.pytorch.org/whl/cu132" in f
              for f in found["fix"]), found["fix"])


@case
def two_cudnn_versions_within_reach_warn(tmp):
    root, site, env = machine_with_venv(tmp, "doctor-healthy-2404")
    wheel = site / "nvidia/cudnn/lib"
    wheel.mkdir(parents=True)
    shutil.copy("/bin/true", wheel / "libcudnn.so.9")
    info = site / "nvidia_cudnn_cu13-9.19.0.56.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("nvidia/cudnn/lib/libcudnn.so.9,sha256=x,1\n")
    system = root / "opt/nv/lib"
    system.mkdir(parents=True)
    shutil.copy("/bin/true", system / "libcudnn.so.9.1.0")
    (system / "libcudnn.so.9").symlink_to("libcudnn.so.9.1.0")
    env["LD_LIBRARY_PATH"] = "/opt/nv/lib"
    found = findings(env)["cudnn-copies"]
    check(found["status"] == "warn", found)
    check("libcudnn.so.9 in 2 versions (9.1.0, 9.19.0.56)" in found["summary"], found)
    check(any(e.endswith("opt/nv/lib/libcudnn.so.9.1.0: 9.1.0 (system)") for e in found["evidence"]),
          found["evidence"])
    check(any(e.endswith("nvidia/cudnn/lib/libcudnn.so.9: 9.19.0.56 (pip wheel)") for e in found["evidence"]),
          found["evidence"])
    # One copy only: ok.
    del env["LD_LIBRARY_PATH"]
    check(findings(env)["cudnn-copies"]["status"] == "ok", "one copy")


@case
def triton_ptxas_that_does_not_know_the_gpu_fails(tmp):
    ptxas = find_cuda_tool("ptxas")
    if not (FAKE_DRIVER and ptxas):
        print("note: needs the fake driver and a real ptxas; not checked")
        return
    root, site, env = machine_with_venv(tmp, "doctor-toolkit-mismatch")  # a Tesla K80, sm_37
    bundled = site / "triton/backends/nvidia/bin"
    bundled.mkdir(parents=True)
    shutil.copy(ptxas, bundled / "ptxas")
    found = findings(env)["triton-ptxas"]
    release = found["evidence"][0]
    check(found["status"] == "fail" and "sm_37" in found["summary"], found)
    check("bundled with triton" in release, release)
    # TRITON_PTXAS_PATH is read inside the machine: a missing one there is not the host's.
    env["TRITON_PTXAS_PATH"] = "/opt/nowhere/ptxas"
    unreadable = findings(env)["triton-ptxas"]
    check(unreadable["evidence"][0].startswith(str(root / "opt/nowhere/ptxas")), unreadable)
    check(unreadable["status"] == "warn" and any("TRITON_PTXAS_PATH" in line for line in unreadable["fix"]),
          f"a ptxas whose release is unknown comes with a fix: {unreadable}")
    # A site's wrapper script names the machine's own ptxas, read inside the machine too.
    (root / "opt/cuda/bin").mkdir(parents=True)
    shutil.copy(ptxas, root / "opt/cuda/bin/ptxas")
    (root / "usr/local/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/local/bin/ptxas").write_text('#!/bin/sh\nexec /opt/cuda/bin/ptxas "$@"\n')
    env["TRITON_PTXAS_PATH"] = "/usr/local/bin/ptxas"
    wrapped = findings(env)["triton-ptxas"]
    check("a script running /opt/cuda/bin/ptxas, release 1" in wrapped["evidence"][0]
          and wrapped["status"] == "fail", wrapped)


finish()
