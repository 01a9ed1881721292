"""End to end from PyPI itself: `cudaenv install 13.0.2 --source pypi` takes NVIDIA's real wheels
from https://pypi.org/simple (the index pages live, the wheel bodies from cudaenv's own download
cache, kept under CUDAENV_TEST_CACHE so a second run downloads nothing), then a project pinned to
it compiles a kernel through the nvcc shim. cuDNN from nvidia-cudnn-cu13 goes beside it, and
`verify --cudnn` loads it: the device-query program reports cudnnGetVersion() before it looks for
a GPU, so the version is checked on machines without one too. Then the prefix is a toolkit on its
own, with no other CUDA in reach (PATH without the system's, no /usr/local/cuda in any variable):
a CMake project with find_package(CUDAToolkit) and enable_language(CUDA) links CUDA::cublas from
it, as `nvcc -lcublas -cudart shared` does. Skipped when PyPI is unreachable."""

import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

from harness import SKIP, case, check, clean_env, finish, run

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path(__file__).parent / ".cache"))
RELEASE, NVCC = "13.0.2", "13.0.88"
CUDNN = "9.19.0"  # nvidia-cudnn-cu13 9.19.0.56, the build torch 2.11 pins
# "minimal" and cuBLAS, named as redist components (each is one of NVIDIA's wheels).
COMPONENTS = "cuda_nvcc,cuda_cudart,cuda_cccl,cuda_crt,libnvvm,cuda_culibos,libcublas"
BLAS = """
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>
int main() {
  int version = 0;
  cudaRuntimeGetVersion(&version);
  cublasHandle_t handle;
  std::printf("runtime %d, cublasCreate %d\\n", version, static_cast<int>(cublasCreate(&handle)));
  return 0;
}
"""
CMAKE_PROJECT = """cmake_minimum_required(VERSION 3.18)
project(blas LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(blas blas.cu)
target_link_libraries(blas PRIVATE CUDA::cublas CUDA::cudart)
"""
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


def linked_from(program, library, env):
    """The file `library` resolves to for `program` under `env`'s LD_LIBRARY_PATH (ldd)."""
    out = subprocess.run(["ldd", str(program)], env=env, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith(library) and "=>" in line:
            return line.split("=>")[1].split("(")[0].strip()
    return f"(not linked: {out!r})"


def builds_alone(tmp, env, project, prefix):
    """No other CUDA in reach: the system's toolkit is off PATH, no variable names it."""
    alone = dict(env, PATH="/usr/bin:/bin")
    if shutil.which("nvcc", path=alone["PATH"]):
        print("note: an nvcc in /usr/bin: the prefix is the only CUDA cudaenv puts in reach")
    cmake = shutil.which("cmake")
    check(cmake is not None, "cmake is installed (scripts/deps)")
    (project / "blas.cu").write_text(BLAS)
    (project / "CMakeLists.txt").write_text(CMAKE_PROJECT)
    cudaenv = os.environ["CUDAENV_BIN"]
    configured = subprocess.run([cudaenv, "exec", "--", cmake, "-S", ".", "-B", "build"], cwd=project, env=alone,
                                capture_output=True, text=True, timeout=600)
    check(configured.returncode == 0, f"find_package(CUDAToolkit) + CUDA: {configured.stdout[-1500:]!r} "
          f"{configured.stderr[-1500:]!r}")
    cache = (project / "build" / "CMakeCache.txt").read_text() if configured.returncode == 0 else ""
    for variable in ("CUDA_cublas_LIBRARY", "CUDA_cudart_LIBRARY", "CMAKE_CUDA_COMPILER"):
        line = next((l for l in cache.splitlines() if l.startswith(variable + ":")), "(none)")
        check(str(prefix) in line, f"CMake takes {variable} from the PyPI prefix: {line!r}")
    built = subprocess.run([cudaenv, "exec", "--", cmake, "--build", "build"], cwd=project, env=alone,
                           capture_output=True, text=True, timeout=600)
    check(built.returncode == 0, f"the CMake project links CUDA::cublas: {built.stdout[-2000:]!r}")
    runtime = dict(alone, LD_LIBRARY_PATH=str(prefix / "lib"))
    for library in ("libcublas.so", "libcudart.so"):
        where = linked_from(project / "build" / "blas", library, runtime)
        check(where.startswith(str(prefix)), f"the CMake build loads {library} from the prefix: {where}")
    nvcc = subprocess.run([cudaenv, "exec", "--", "nvcc", "-arch=sm_75", "-cudart", "shared", "-o", "blas-nvcc",
                           "blas.cu", "-lcublas"], cwd=project, env=alone, capture_output=True, text=True,
                          timeout=600)
    check(nvcc.returncode == 0, f"nvcc -lcublas -cudart shared: {nvcc.stderr[-2000:]!r}")
    for library in ("libcublas.so", "libcudart.so"):
        where = linked_from(project / "blas-nvcc", library, runtime)
        check(where.startswith(str(prefix)), f"nvcc's build loads {library} from the prefix: {where}")


@case
def toolkit_and_cudnn_from_pypi_compile_through_the_shim(tmp):
    root = CACHE / "pypi-root"  # kept: its cache/downloads holds the wheels between runs
    env = clean_env(tmp, CUDAENV_ROOT=root)
    proc = subprocess.run([os.environ["CUDAENV_BIN"], "install", RELEASE, "--source", "pypi",
                           "--components", COMPONENTS, "--cudnn", CUDNN, "--force"],
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
    builds_alone(tmp, env, project, prefix)


finish()
