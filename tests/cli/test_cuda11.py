"""A real CUDA 11.8 beside a real 13.0. Debian's nvidia-cuda-toolkit 11.8.89 (fetched with
apt-get download, unpacked, never installed: debian_cuda.py) repacked as NVIDIA's redist
components, and 13.0.2 from NVIDIA's wheels (repack.py), served by one loopback mirror and
installed with `cudaenv install`. Each project compiles real code CPU-side (nvcc -c, -cubin, a
program linked against its own cudart) through `exec`, the shims and CMake; on a machine whose
c++ is gcc 12, the 11.8 project gets g++-11 without anyone setting anything."""

import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import REAL_INSTALL_TIMEOUT, BINARY, SKIP, case, check, clean_env, finish, mirror_server, run
import debian_cuda
import repack

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path(__file__).parent / ".cache"))
KERNEL = """#include <cstdio>
__global__ void add_one(int* v) { v[threadIdx.x] += 1; }
int main() {
  int* d = nullptr;
  cudaError_t e = cudaMalloc(&d, 64 * sizeof(int));
  add_one<<<1, 64>>>(d);
  std::printf("CUDA %d: %s\\n", CUDART_VERSION, cudaGetErrorName(e));
  return 0;
}
"""
CMAKE_PROJECT = """cmake_minimum_required(VERSION 3.25)
project(kernel LANGUAGES CXX CUDA)
set(CMAKE_CUDA_ARCHITECTURES 70)
add_executable(kernel kernel.cu)
message(STATUS "probe CMAKE_CUDA_HOST_COMPILER=${CMAKE_CUDA_HOST_COMPILER}")
message(STATUS "probe CMAKE_CUDA_COMPILER_VERSION=${CMAKE_CUDA_COMPILER_VERSION}")
"""
GXX11 = shutil.which("g++-11", path="/usr/bin:/bin")


def default_gcc_major():
    cxx = shutil.which("c++", path="/usr/bin:/bin")
    match = re.search(r"g\+\+-([0-9]+)$", os.path.realpath(cxx)) if cxx else None
    return int(match.group(1)) if match else None


def combined_mirror(into):
    """11.8.0 and 13.0.2 in one mirror: hard links (copies across file systems) of both."""
    sources = [debian_cuda.redist_mirror(), repack.wheel_mirror(str(CACHE), str(into / "work"))]
    if sources[1] is None:
        return None
    mirror = into / "mirror"
    for source in sources:
        for path in source.rglob("*"):
            if path.is_file() and "13.2" not in path.name and path.name != ".complete":
                target = mirror / path.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(path, target)
                except OSError:
                    shutil.copyfile(path, target)
    return mirror


_state = {}


def installed():
    """One installation for every case: the two toolkits and a project pinned to each."""
    if _state:
        return _state
    tmp = Path(tempfile.mkdtemp(prefix="cudaenv-cuda11-"))
    atexit.register(shutil.rmtree, tmp, True)
    mirror = combined_mirror(tmp)
    if mirror is None:
        raise SystemExit(SKIP)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", PATH="/usr/bin:/bin")
    with mirror_server(mirror) as (url, _):
        for release in ("11.8.0", "13.0.2"):
            run(["install", release, "--mirror", url], env, check_exit=0, timeout=REAL_INSTALL_TIMEOUT)
    projects = {}
    for release in ("11.8.0", "13.0.2"):
        project = tmp / f"project-{release}"
        project.mkdir()
        (project / ".cudaenv").write_text(f'cuda = "{release}"\n')
        (project / "kernel.cu").write_text(KERNEL)
        projects[release] = project
    _state.update(tmp=tmp, env=env, projects=projects, root=tmp / "root")
    return _state


def in_project(args, release, env=None, timeout=300):
    state = installed()
    return subprocess.run(args, env=env or state["env"], cwd=state["projects"][release],
                          capture_output=True, text=True, timeout=timeout)


def needed(proc, what):
    check(proc.returncode == 0, f"{what} (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def needed_libraries(binary):
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True).stdout
    return re.findall(r"Shared library: \[([^\]]+)\]", out)


@case
def both_toolkits_are_installed_side_by_side_and_each_project_gets_its_own(tmp):
    state = installed()
    listing = run(["list"], state["env"], check_exit=0).stdout
    check("11.8.0" in listing and "13.0.2" in listing, f"list shows both:\n{listing}")
    for release, nvcc in (("11.8.0", "V11.8.89"), ("13.0.2", "V13.0.88")):
        proc = in_project([BINARY, "exec", "--", "nvcc", "--version"], release)
        check(nvcc in proc.stdout, f"the {release} project runs nvcc {nvcc}: {proc.stdout!r}")


@case
def each_compiles_a_kernel_a_cubin_and_a_program_linked_to_its_own_cudart(tmp):
    for release, cudart in (("11.8.0", "libcudart.so.11.0"), ("13.0.2", "libcudart.so.13")):
        exec_ = [BINARY, "exec", "--", "nvcc"]
        needed(in_project(exec_ + ["-c", "kernel.cu", "-o", "kernel.o"], release),
               f"CUDA {release}: nvcc -c")
        needed(in_project(exec_ + ["-cubin", "-arch=sm_75", "kernel.cu", "-o", "kernel.cubin"],
                          release), f"CUDA {release}: nvcc -cubin")
        cubin = installed()["projects"][release] / "kernel.cubin"
        check(cubin.exists() and cubin.read_bytes()[:4] == b"\x7fELF",
              f"CUDA {release}: the cubin is an ELF image")
        needed(in_project(exec_ + ["-cudart", "shared", "kernel.cu", "-o", "kernel"], release),
               f"CUDA {release}: nvcc links a program")
        libraries = needed_libraries(installed()["projects"][release] / "kernel")
        check(cudart in libraries, f"CUDA {release}'s program needs {cudart}: {libraries}")


@case
def on_gcc_12_the_11_8_project_gets_g_plus_plus_11_and_13_0_keeps_the_default(tmp):
    if GXX11 is None or (default_gcc_major() or 0) <= 11:
        print("skip: needs c++ newer than gcc 11 and g++-11 installed (scripts/deps --test)")
        return
    state = installed()
    prefix = state["root"] / "toolkits" / "11.8.0"
    plain = subprocess.run([prefix / "bin" / "nvcc", "-c", "kernel.cu", "-o", "plain.o"],
                           cwd=state["projects"]["11.8.0"], env=state["env"],
                           capture_output=True, text=True, timeout=300)
    check(plain.returncode != 0 and "unsupported GNU version" in plain.stderr,
          f"without cudaenv, nvcc 11.8 refuses the default gcc: {plain.stderr[-400:]!r}")
    flags = in_project([BINARY, "exec", "--", "printenv", "NVCC_PREPEND_FLAGS"], "11.8.0")
    check(flags.stdout.strip() == f"-ccbin {GXX11}", f"11.8: -ccbin g++-11 prepended: {flags.stdout!r}")
    host = in_project([BINARY, "exec", "--", "printenv", "CUDAHOSTCXX"], "11.8.0")
    check(host.stdout.strip() == GXX11, f"11.8: CUDAHOSTCXX for CMake: {host.stdout!r}")
    newer = in_project([BINARY, "exec", "--", "printenv", "NVCC_PREPEND_FLAGS"], "13.0.2")
    check(newer.returncode == 1 and newer.stdout == "", f"13.0 accepts gcc 12: nothing set: {newer.stdout!r}")
    which = in_project([BINARY, "which", "--host-compiler"], "11.8.0")
    needed(which, "which --host-compiler")
    first, why = (which.stdout.splitlines() + ["", ""])[:2]
    check(first == GXX11, f"which --host-compiler names g++-11: {which.stdout!r}")
    check("newer than this toolkit accepts (gcc <= 11" in why, f"and says why: {why!r}")
    default = in_project([BINARY, "which", "--host-compiler"], "13.0.2")
    check(default.stdout.startswith("c++\n") and "accepts" in default.stdout,
          f"13.0: the default stands, and why: {default.stdout!r}")


@case
def the_shim_and_cmake_build_the_11_8_project_with_g_plus_plus_11(tmp):
    if GXX11 is None or (default_gcc_major() or 0) <= 11:
        print("skip: needs c++ newer than gcc 11 and g++-11 installed")
        return
    state = installed()
    run(["rehash"], state["env"], check_exit=0)
    shim_env = dict(state["env"], PATH=f"{state['root']}/shims:/usr/bin:/bin")
    needed(in_project(["nvcc", "-c", "kernel.cu", "-o", "shim.o"], "11.8.0", shim_env),
           "the nvcc shim compiles in the 11.8 project")
    project = state["projects"]["11.8.0"]
    (project / "CMakeLists.txt").write_text(CMAKE_PROJECT)
    configure = in_project([BINARY, "exec", "--", "cmake", "-S", ".", "-B", "build"], "11.8.0")
    needed(configure, "CMake configures CUDA 11.8 inside cudaenv exec")
    found = dict(re.findall(r"^-- probe (\w+)=(.*)$", configure.stdout, re.MULTILINE))
    check(found.get("CMAKE_CUDA_HOST_COMPILER") == GXX11, f"CMake took g++-11 from CUDAHOSTCXX: {found}")
    check(found.get("CMAKE_CUDA_COMPILER_VERSION") == "11.8.89", f"CMake found nvcc 11.8.89: {found}")
    needed(in_project([BINARY, "exec", "--", "cmake", "--build", "build"], "11.8.0"),
           "CMake builds the 11.8 project")
    check((project / "build" / "kernel").exists(), "the program was linked")


def usr_bin_without(tmp, pattern, directory):
    """A PATH directory linking every program of /usr/bin whose name does not match `pattern`."""
    sandbox = tmp / directory
    sandbox.mkdir()
    for name in sorted(os.listdir("/usr/bin")):
        if not re.search(pattern, name):
            (sandbox / name).symlink_to(Path("/usr/bin") / name)
    return sandbox


def without_gxx11(tmp):
    """A PATH holding everything of /usr/bin but the GCC 11 programs."""
    return usr_bin_without(tmp, r"-11$", "sandbox-bin")


@case
def without_g_plus_plus_11_use_verify_doctor_and_which_name_the_package(tmp):
    if (default_gcc_major() or 0) <= 11:
        print("skip: needs c++ newer than gcc 11")
        return
    state = installed()
    env = dict(state["env"], PATH=str(without_gxx11(tmp)))
    which = in_project([BINARY, "which", "--host-compiler"], "11.8.0", env)
    check(which.returncode == 1 and "sudo apt install g++-11" in which.stderr,
          f"which --host-compiler names the package: {which.returncode} {which.stderr!r}")
    fresh = tmp / "fresh"
    fresh.mkdir()
    use = subprocess.run([BINARY, "use", "11.8.0"], env=env, cwd=fresh, capture_output=True,
                         text=True, timeout=120)
    check(use.returncode == 0 and "apt install g++-11" in use.stderr,
          f"use names apt install g++-11: {use.returncode} {use.stderr!r}")
    verify = in_project([BINARY, "verify", "--json"], "11.8.0", env)
    report = json.loads(verify.stdout or "{}")
    check(verify.returncode == 7 and report.get("cause") == "host_compiler_unsupported",
          f"verify: host_compiler_unsupported: {verify.returncode} {report.get('cause')} {verify.stderr[-300:]!r}")
    check("apt install g++-11" in report.get("fix", ""), f"verify's fix: {report.get('fix')!r}")
    doctor = in_project([BINARY, "doctor", "--json"], "11.8.0", env)
    findings = {f["id"]: f for f in json.loads(doctor.stdout)["findings"]}
    gcc = findings.get("host-compiler", {})
    check(gcc.get("status") == "fail" and "sudo apt install g++-11" in gcc.get("fix", []),
          f"doctor names the package: {gcc}")


@case
def nvcc_11_8_ignores_nvcc_ccbin_so_activation_still_adds_the_ccbin(tmp):
    """nvcc reads NVCC_CCBIN from CUDA 12.5 on: for 11.8 the user's NVCC_CCBIN is not a choice
    that stands. exec adds -ccbin and nvcc compiles; which and doctor say it is ignored."""
    if GXX11 is None or (default_gcc_major() or 0) <= 11:
        print("skip: needs c++ newer than gcc 11 and g++-11 installed (scripts/deps --test)")
        return
    state = installed()
    env = dict(state["env"], NVCC_CCBIN=GXX11)
    flags = in_project([BINARY, "exec", "--", "printenv", "NVCC_PREPEND_FLAGS"], "11.8.0", env)
    check(flags.stdout.strip() == f"-ccbin {GXX11}",
          f"11.8 with NVCC_CCBIN set: -ccbin still prepended: {flags.stdout!r} {flags.stderr!r}")
    needed(in_project([BINARY, "exec", "--", "nvcc", "-c", "kernel.cu", "-o", "ccbin.o"], "11.8.0", env),
           "11.8 with NVCC_CCBIN set compiles through exec")
    which = in_project([BINARY, "which", "--host-compiler"], "11.8.0", env)
    first, why = (which.stdout.splitlines() + ["", ""])[:2]
    check(first == GXX11 and "NVCC_CCBIN" in why and "ignored by nvcc 11.8.0" in why,
          f"which --host-compiler says NVCC_CCBIN is ignored: {which.stdout!r} {which.stderr!r}")
    doctor = in_project([BINARY, "doctor", "--json"], "11.8.0", env)
    gcc = {f["id"]: f for f in json.loads(doctor.stdout)["findings"]}.get("host-compiler", {})
    # doctor judges the compiler activation hands nvcc (g++-11 through -ccbin), as `which` names
    # it, and says the user's NVCC_CCBIN alone would be ignored.
    check(gcc.get("status") == "ok"
          and any(e.startswith(f"activation hands nvcc {GXX11}") and "ignored by nvcc 11.8.0" in e
                  for e in gcc.get("evidence", [])),
          f"doctor judges activation's g++-11 and names NVCC_CCBIN ignored: {gcc}")
    own = dict(env, NVCC_PREPEND_FLAGS="-ccbin /usr/bin/g++-11")
    kept = in_project([BINARY, "exec", "--", "printenv", "NVCC_PREPEND_FLAGS"], "11.8.0", own)
    check(kept.stdout.strip() == "-ccbin /usr/bin/g++-11", f"a -ccbin of the user's own stands: {kept.stdout!r}")
    newer = in_project([BINARY, "which", "--host-compiler"], "13.0.2", env)
    check(newer.stdout.startswith(GXX11 + "\n") and "your own NVCC_CCBIN" in newer.stdout,
          f"13.0 reads NVCC_CCBIN: the user's stands: {newer.stdout!r}")
    unset = in_project([BINARY, "exec", "--", "printenv", "NVCC_PREPEND_FLAGS"], "13.0.2", env)
    check(unset.returncode == 1, f"13.0 with NVCC_CCBIN: nothing added: {unset.stdout!r}")


def without_compilers(tmp):
    """A PATH holding everything of /usr/bin but the C and C++ compilers."""
    return usr_bin_without(tmp, r"(^|-)(gcc|g\+\+|cc|c\+\+|cpp|clang|clang\+\+)(-[0-9.]+)?$", "no-compiler-bin")


@case
def with_no_host_compiler_verify_names_the_flag_11_8_reads(tmp):
    state = installed()
    env = dict(state["env"], PATH=str(without_compilers(tmp)))
    verify = in_project([BINARY, "verify", "--json"], "11.8.0", env)
    report = json.loads(verify.stdout or "{}")
    check(report.get("cause") == "compile_failed" and "NVCC_PREPEND_FLAGS='-ccbin" in report.get("fix", "")
          and "point NVCC_CCBIN" not in report.get("fix", ""),
          f"11.8 without a compiler: the fix names -ccbin, not NVCC_CCBIN: {report.get('cause')} "
          f"{report.get('fix')!r} {verify.stderr[-300:]!r}")


if __name__ == "__main__":
    finish()
