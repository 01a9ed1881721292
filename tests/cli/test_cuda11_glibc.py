"""Debian's real CUDA 11.8 on newer systems. (1) As `apt install nvidia-cuda-toolkit` lays it
out (nvcc in /usr/bin, its real directory /usr/lib/nvidia-cuda-toolkit, the version in dpkg's
status), in a fixture sysroot built from the unpacked .debs: info, list and doctor recognise it.
(2) glibc 2.41's <math.h> (Debian 13's libc6-dev, unpacked) against 11.8's headers: doctor
reads the glibc version from /usr/include/features.h and fails the check; verify meets nvcc's
real error and names it glibc_headers_clash, with the fix."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from harness import REAL_INSTALL_TIMEOUT, BINARY, SKIP, case, check, clean_env, finish, mirror_server, run
import debian_cuda

GXX11 = shutil.which("g++-11", path="/usr/bin:/bin")


def link_or_copy(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def debian_sysroot(into, glibc):
    """A machine with Debian's nvidia-cuda-toolkit installed and `glibc`'s features.h."""
    cuda = debian_cuda.cuda_root()
    root = into / "machine"
    for part in ("usr/bin/nvcc", "usr/lib/nvidia-cuda-toolkit/bin/nvcc", "var/lib/dpkg/status"):
        link_or_copy(cuda / part, root / part)
    link_or_copy(glibc / "usr/include/features.h", root / "usr/include/features.h")
    return root


def install_11_8(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", PATH="/usr/bin:/bin")
    with mirror_server(debian_cuda.redist_mirror()) as (url, _):
        run(["install", "11.8.0", "--mirror", url], env, check_exit=0, timeout=REAL_INSTALL_TIMEOUT)
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "11.8.0"\n')
    return env, project


def findings(proc):
    return {f["id"]: f for f in json.loads(proc.stdout)["findings"]}


@case
def debians_split_layout_is_a_system_toolkit_with_its_dpkg_version(tmp):
    machine = debian_sysroot(tmp, debian_cuda.glibc_root())
    env = clean_env(tmp, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=tmp / "root", PATH="/usr/bin:/bin")
    info = json.loads(run(["info", "--json"], env, check_exit=0).stdout)
    toolkits = [t for t in info["toolkits"] if t["path"] == "/usr"]
    check(len(toolkits) == 1, f"one toolkit at /usr: {info['toolkits']}")
    toolkit = toolkits[0] if toolkits else {}
    check(toolkit.get("version") == "11.8.0" and toolkit.get("nvcc_version") == "11.8.89",
          f"release and nvcc from dpkg's 11.8.89~11.8.0-5~deb12u1: {toolkit}")
    kinds = {origin["kind"] for origin in toolkit["origins"]}
    check({"PATH", "distro-package"} <= kinds, f"reached through PATH and the package: {kinds}")
    listing = run(["list"], env, check_exit=0).stdout
    check("11.8.0" in listing and "/usr" in listing, f"list shows it:\n{listing}")
    doctor = subprocess.run([BINARY, "doctor", "--json"], env=env, capture_output=True, text=True,
                            timeout=120)
    glibc = findings(doctor)["glibc-headers"]
    check(glibc["status"] == "fail" and "glibc 2.41" in glibc["summary"] and "CUDA 11.8" in glibc["summary"],
          f"doctor: glibc 2.41 is too new for 11.8's headers: {glibc}")
    check(any("cudaenv install 13.0" in line for line in glibc["fix"]), f"doctor's fix: {glibc['fix']}")


@case
def doctor_passes_the_same_toolkit_on_glibc_2_36(tmp):
    bookworm = tmp / "bookworm"
    link_or_copy(Path("/usr/include/features.h"), bookworm / "usr/include/features.h")
    machine = debian_sysroot(tmp, bookworm)
    env = clean_env(tmp, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=tmp / "root", PATH="/usr/bin:/bin")
    doctor = subprocess.run([BINARY, "doctor", "--json"], env=env, capture_output=True, text=True,
                            timeout=120)
    glibc = findings(doctor)["glibc-headers"]
    check(glibc["status"] == "ok", f"glibc of this machine suits 11.8: {glibc}")


@case
def verify_names_the_real_glibc_2_41_clash_and_the_fix(tmp):
    if GXX11 is None:
        print("skip: g++-11 is not installed (scripts/deps --test)")
        return
    env, project = install_11_8(tmp)
    include = debian_cuda.glibc_root() / "usr/include"
    # glibc 2.41's headers ahead of this machine's, as on Debian 13 or Ubuntu 25.04.
    env = dict(env, NVCC_APPEND_FLAGS=f"-isystem {include} -isystem {include}/x86_64-linux-gnu")
    proc = subprocess.run([BINARY, "verify", "--json"], env=env, cwd=project, capture_output=True,
                          text=True, timeout=300)
    report = json.loads(proc.stdout)
    check(proc.returncode == 7 and report["cause"] == "glibc_headers_clash",
          f"verify: glibc_headers_clash: {proc.returncode} {report['cause']} {report['message']}")
    check('"cospi"' in report["message"] and "glibc <= 2.40" in report["message"],
          f"the message names the function and the limit: {report['message']}")
    check("CUDA 13.0 or newer" in report["fix"] and "glibc <= 2.40" in report["fix"],
          f"the fix names a newer toolkit and an older glibc: {report['fix']}")


if __name__ == "__main__":
    finish()
