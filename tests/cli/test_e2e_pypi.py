"""End to end from PyPI itself: `cudaenv install 13.0.2 --source pypi` takes NVIDIA's real wheels
from https://pypi.org/simple (the index pages live, the wheel bodies from cudaenv's own download
cache, kept under CUDAENV_TEST_CACHE so a second run downloads nothing), then a project pinned to
it compiles a kernel through the nvcc shim. cuDNN from nvidia-cudnn-cu13 goes beside it, and
`verify --cudnn` loads it: the device-query program reports cudnnGetVersion() before it looks for
a GPU, so the version is checked on machines without one too. Skipped when PyPI is unreachable."""

import os
import subprocess
import urllib.request
from pathlib import Path

from harness import SKIP, case, check, clean_env, finish, run

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path(__file__).parent / ".cache"))
RELEASE, NVCC = "13.0.2", "13.0.88"
CUDNN = "9.19.0"  # nvidia-cudnn-cu13 9.19.0.56, the build torch 2.11 pins
KERNEL = """
#include <cstdio>
__global__ void add_one(int* v) { v[threadIdx.x] += 1; }
int main() { std::printf("built with CUDA %d\\n", CUDART_VERSION); return 0; }
"""


def pypi_reachable():
    try:
        urllib.request.urlopen("https://pypi.org/simple/cuda-toolkit/", timeout=15).close()
        return True
    except OSError:
        return False


if not pypi_reachable():
    print("skip: https://pypi.org is not reachable")
    raise SystemExit(SKIP)


@case
def toolkit_and_cudnn_from_pypi_compile_through_the_shim(tmp):
    root = CACHE / "pypi-root"  # kept: its cache/downloads holds the wheels between runs
    env = clean_env(tmp, CUDAENV_ROOT=root)
    proc = subprocess.run([os.environ["CUDAENV_BIN"], "install", RELEASE, "--source", "pypi",
                           "--components", "minimal", "--cudnn", CUDNN, "--force"],
                          env=env, capture_output=True, text=True, timeout=1500)
    check(proc.returncode == 0, f"install from PyPI: {proc.returncode} {proc.stderr[-2000:]!r}")
    prefix = root / "toolkits" / RELEASE
    receipt = (prefix / "cudaenv-receipt.json").read_text()
    check('"source": "pypi"' in receipt and "files.pythonhosted.org" in receipt,
          "the receipt names PyPI's files")
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text(f'cuda = "{RELEASE}"\n')
    (project / "probe.cu").write_text(KERNEL)
    shim_env = dict(env, PATH=f"{root / 'shims'}:/usr/bin:/bin")
    built = subprocess.run(["nvcc", "-arch=sm_75", "-o", "probe", "probe.cu"], cwd=project, env=shim_env,
                           capture_output=True, text=True, timeout=600)
    check(built.returncode == 0, f"the shim's nvcc compiles: {built.stderr[-2000:]!r}")
    version = subprocess.run(["nvcc", "--version"], cwd=project, env=shim_env, capture_output=True, text=True)
    check(f"V{NVCC}" in version.stdout, f"the shim runs PyPI's nvcc: {version.stdout!r}")
    ran = subprocess.run([str(project / "probe")], capture_output=True, text=True,
                         env=dict(shim_env, LD_LIBRARY_PATH=str(prefix / "lib")))
    check("built with CUDA 13000" in ran.stdout, f"the program runs: {ran.stdout!r} {ran.stderr!r}")
    verify = run(["verify", RELEASE, "--cudnn", CUDNN], env)
    check("cudnnGetVersion() = 91900" in verify.stdout,
          f"verify loads PyPI's cuDNN: {verify.returncode} {verify.stdout!r} {verify.stderr!r}")


finish()
