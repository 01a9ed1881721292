"""End to end with real CUDA: (1) the toolkit this machine carries, packed as NVIDIA packs its
redist archives, served over HTTP, installed with `cudaenv install --mirror`, then used to
compile and link a .cu file; (2) two CUDA 13 releases built from NVIDIA's own component wheels
on PyPI (cached), installed side by side, each compiling the same .cu and reporting its own
nvcc version, directly and through the shims in projects pinned to each."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness import REAL_INSTALL_TIMEOUT, SKIP, case, check, clean_env, finish, mirror_server, run
import repack

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path(__file__).parent / ".cache"))
KERNEL = """
#include <cstdio>
__global__ void add_one(int* v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] += 1; }
int main() {
  int* d = nullptr;
  cudaError_t e = cudaMalloc(&d, 1024 * sizeof(int));
  std::printf("built with CUDA %d: %s\\n", CUDART_VERSION, cudaGetErrorName(e));
  return 0;
}
"""
# Wheel versions of two CUDA 13 releases (NVIDIA publishes nvcc itself only in the CUDA 13 wheels).
RELEASES = repack.WHEEL_RELEASES


def system_nvcc():
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None, None
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release ([0-9]+\.[0-9]+), V([0-9.]+)", out)
    return (nvcc, match) if match else (None, None)


def compile_with(prefix, workdir, env):
    source = workdir / "probe.cu"
    source.write_text(KERNEL)
    binary = workdir / "probe"
    # Only the installed toolkit on PATH: nothing may come from the machine's own CUDA.
    build_env = dict(env, PATH=f"{prefix}/bin:/usr/bin:/bin")
    proc = subprocess.run([f"{prefix}/bin/nvcc", "-arch=sm_75", "-o", str(binary), str(source)],
                          capture_output=True, text=True, env=build_env, timeout=300)
    return proc, binary


def nvcc_version(prefix):
    out = subprocess.run([f"{prefix}/bin/nvcc", "--version"], capture_output=True, text=True).stdout
    match = re.search(r"V([0-9.]+)", out)
    return match.group(1) if match else None


@case
def the_machines_own_toolkit_installs_from_a_mirror_and_compiles(tmp):
    nvcc, match = system_nvcc()
    if not nvcc:
        print("skip: no nvcc on PATH")
        return
    release = match.group(1) + ".0"
    # (Named apart from the "system-mirror-*" that earlier runs packed: a run whose PATH held a
    # wrapper script took /usr/local for the toolkit; that one is removed.)
    shutil.rmtree(CACHE / f"system-mirror-{match.group(2)}", ignore_errors=True)
    mirror = CACHE / f"system-toolkit-mirror-{match.group(2)}"
    if not (mirror / "cuda" / "redist" / f"redistrib_{release}.json").exists():
        shutil.rmtree(mirror, ignore_errors=True)
        if not repack.pack_system_toolkit(repack.toolkit_prefix_of(nvcc), str(mirror), release, match.group(2)):
            print("skip: this toolkit has no static cudart to pack")
            return
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    with mirror_server(mirror) as (url, _):
        run(["install", release, "--mirror", url, "--components", "minimal"], env, check_exit=0,
            timeout=REAL_INSTALL_TIMEOUT)
    prefix = tmp / "root" / "toolkits" / release
    check(nvcc_version(prefix) == match.group(2), f"installed nvcc reports {match.group(2)}")
    # The toolkit's own programs were packed, not a wrapper that runs the machine's.
    for program in ("bin/nvcc", "bin/ptxas", "nvvm/bin/cicc"):
        check((prefix / program).read_bytes()[:4] == b"\x7fELF", f"{program} is the toolkit's own program")
    proc, binary = compile_with(prefix, tmp, env)
    check(proc.returncode == 0, f"the installed nvcc compiles and links:\n{proc.stderr}")
    check(binary.exists(), "an executable was produced")


@case
def two_releases_from_nvidias_wheels_install_side_by_side(tmp):
    mirror = repack.wheel_mirror(CACHE, tmp)
    if mirror is None:
        sys.exit(SKIP)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    with mirror_server(mirror) as (url, _):
        for release in RELEASES:
            run(["install", release, "--mirror", url], env, check_exit=0, timeout=REAL_INSTALL_TIMEOUT)
    listed = run(["list"], env, check_exit=0).stdout
    for release, pins in RELEASES.items():
        prefix = tmp / "root" / "toolkits" / release
        check(release in listed, f"list shows {release}")
        check(nvcc_version(prefix) == pins["nvidia-cuda-nvcc"], f"{release}'s nvcc reports {pins['nvidia-cuda-nvcc']}")
        workdir = tmp / f"build-{release}"
        workdir.mkdir()
        proc, binary = compile_with(prefix, workdir, env)
        check(proc.returncode == 0, f"{release} compiles and links:\n{proc.stderr[-2000:]}")
        check(binary.exists(), f"{release} produced an executable")

    # The real nvcc of each release through the shims, chosen by each project's .cudaenv, with
    # nothing but the shims and the system directories on PATH.
    shim_env = dict(env, PATH=f"{tmp}/root/shims:/usr/bin:/bin")
    for release, pins in RELEASES.items():
        project = tmp / f"project-{release}"
        project.mkdir()
        (project / ".cudaenv").write_text(f'cuda = "{release}"\n')
        (project / "probe.cu").write_text(KERNEL)
        version = subprocess.run(["nvcc", "--version"], cwd=project, env=shim_env, capture_output=True, text=True)
        check(f"V{pins['nvidia-cuda-nvcc']}" in version.stdout, f"the shim runs {release}'s nvcc: {version.stdout}")
        built = subprocess.run(["nvcc", "-arch=sm_75", "-o", "probe with space", "probe.cu"], cwd=project,
                               env=shim_env, capture_output=True, text=True, timeout=300)
        check(built.returncode == 0 and (project / "probe with space").exists(),
              f"{release} compiles through the shim:\n{built.stderr[-2000:]}")
        failed = subprocess.run(["nvcc", "no-such-file.cu"], cwd=project, env=shim_env, capture_output=True, text=True)
        check(failed.returncode != 0 and "no-such-file.cu" in failed.stderr,
              f"nvcc's failure passes through the shim: {failed.returncode} {failed.stderr}")


finish()
