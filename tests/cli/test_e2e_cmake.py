"""CMake finds the toolkit cudaenv activates: a real CMake CUDA project (`project(LANGUAGES CXX
CUDA)` and `find_package(CUDAToolkit)`) configured through `cudaenv exec` in two projects pinned
to two CUDA releases installed side by side (NVIDIA's real nvcc, from its CUDA 13 wheels packed
into a local mirror as test_e2e_install.py does) finds each project's own toolkit, both as its
CUDA compiler and as CUDAToolkit, even with another CUDA in /usr/local/cuda and nothing on PATH
but the system directories; and with a default c++ newer than the toolkit accepts, CMake gets
the g++ it does accept through CUDAHOSTCXX."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness import REAL_INSTALL_TIMEOUT, SKIP, case, check, clean_env, finish, mirror_server, run
import repack

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path(__file__).parent / ".cache"))
RELEASES = repack.WHEEL_RELEASES
PROJECT = """cmake_minimum_required(VERSION 3.18)
project(probe LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
message(STATUS "probe CMAKE_CUDA_COMPILER=${CMAKE_CUDA_COMPILER}")
message(STATUS "probe CMAKE_CUDA_COMPILER_VERSION=${CMAKE_CUDA_COMPILER_VERSION}")
message(STATUS "probe CUDAToolkit_VERSION=${CUDAToolkit_VERSION}")
message(STATUS "probe CUDAToolkit_BIN_DIR=${CUDAToolkit_BIN_DIR}")
message(STATUS "probe CMAKE_CUDA_HOST_COMPILER=${CMAKE_CUDA_HOST_COMPILER}")
"""


def wheel_mirror(tmp):
    mirror = repack.wheel_mirror(CACHE, tmp)
    if mirror is None:
        sys.exit(SKIP)
    return mirror


def configured(output):
    return dict(re.findall(r"^-- probe (\w+)=(.*)$", output, re.MULTILINE))


@case
def each_project_configures_against_its_own_toolkit(tmp):
    if not shutil.which("cmake"):
        print("skip: no cmake")
        sys.exit(SKIP)
    mirror = wheel_mirror(tmp)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    with mirror_server(mirror) as (url, _):
        for release in RELEASES:
            run(["install", release, "--mirror", url], env, check_exit=0, timeout=REAL_INSTALL_TIMEOUT)
    # Only the system directories on PATH: CMake must learn the toolkit from cudaenv's variables.
    env = dict(env, PATH="/usr/bin:/bin")
    for release, pins in RELEASES.items():
        project = tmp / f"project-{release}"
        (project / "src").mkdir(parents=True)
        (project / "src" / "CMakeLists.txt").write_text(PROJECT)
        (project / ".cudaenv").write_text(f'cuda = "{release}"\n')
        proc = subprocess.run([os.environ["CUDAENV_BIN"], "exec", "--", "cmake", "-S", "src", "-B", "build"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=600)
        found = configured(proc.stdout)
        prefix = tmp / "root" / "toolkits" / release
        nvcc = pins["nvidia-cuda-nvcc"]
        check(proc.returncode == 0, f"{release}: cmake configures:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        check(found.get("CMAKE_CUDA_COMPILER") == str(prefix / "bin" / "nvcc"),
              f"{release}: CMake's CUDA compiler is the project's nvcc: {found}")
        check(found.get("CMAKE_CUDA_COMPILER_VERSION") == nvcc, f"{release}: CUDA compiler {nvcc}: {found}")
        check(found.get("CUDAToolkit_VERSION") == nvcc, f"{release}: FindCUDAToolkit finds {nvcc}: {found}")
        check(found.get("CUDAToolkit_BIN_DIR") == str(prefix / "bin"), f"{release}: CUDAToolkit in {prefix}: {found}")
        check(found.get("CMAKE_CUDA_HOST_COMPILER") == "", f"{release}: the default c++ suits it: {found}")

    # A default c++ newer than CUDA 13 accepts (its host_config.h stops at GCC 15): the machine's
    # g++ behind the names g++-16 (what c++ leads to) and g++-15. cudaenv sets CUDAHOSTCXX, and
    # CMake hands g++-15 to nvcc.
    compilers = tmp / "compilers"
    compilers.mkdir()
    for name in ("g++-16", "g++-15"):
        (compilers / name).write_text(f'#!/bin/sh\nexec {shutil.which("g++")} "$@"\n')
        (compilers / name).chmod(0o755)
    (compilers / "c++").symlink_to(compilers / "g++-16")
    project = tmp / "project-13.0.2"
    proc = subprocess.run([os.environ["CUDAENV_BIN"], "exec", "--", "cmake", "-S", "src", "-B", "build-new-gcc"],
                          cwd=project, env=dict(env, PATH=f"{compilers}:/usr/bin:/bin"), capture_output=True,
                          text=True, timeout=600)
    found = configured(proc.stdout)
    check(proc.returncode == 0, f"configures with CUDAHOSTCXX:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    check(found.get("CMAKE_CUDA_HOST_COMPILER") == str(compilers / "g++-15"),
          f"CMake's CUDA host compiler is the newest g++ CUDA 13.0 accepts: {found}")


finish()
