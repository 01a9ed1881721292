"""`cudaenv scan`: libraries built here with the real nvcc, placed in a real venv's site-packages
as extensions and wheels place them, judged for described GPUs (--arch) — native, jit, none with
its fix — plus Triton's bundled ptxas (a real one) and a damaged file among them."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from harness import FAKE_DRIVER, case, check, clean_env, expect_error, finish, fixture_machine, run
from scan_fixtures import build_cuda_libraries, make_venv, nvcc_and_scratch

NVCC, BUILT = nvcc_and_scratch("cudaenv-scan-built-")
# A translation unit without kernels, as NVIDIA's libcufftw.so.12 has: nvcc still writes an
# sm_75 cubin for it, holding no function. Built beside the others.
(BUILT / "no_kernels.cu").write_text('extern "C" int plan_count(int n) { return n + 1; }\n'
                                     "__device__ int unused(int x) { return 2 * x; }\n")
NO_KERNELS = subprocess.Popen([NVCC, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_75,code=sm_75",
                               str(BUILT / "no_kernels.cu"), "-o", str(BUILT / "no_kernels.so")])
LIBS = build_cuda_libraries(NVCC, BUILT, {"sm80.so": "arch=compute_80,code=sm_80",
                                          "sm80_ptx.so": "arch=compute_80,code=[sm_80,compute_80]"})
if NO_KERNELS.wait(timeout=600) != 0:
    raise SystemExit("nvcc failed on no_kernels.cu")
LIBS["no_kernels.so"] = BUILT / "no_kernels.so"
PTXAS = Path(NVCC).parent / "ptxas"


def site_tree(tmp):
    """A venv whose site-packages holds an sm_80-only extension, a torch-like library with PTX, a
    damaged library, plain Python files, and triton with a real ptxas."""
    python, site = make_venv(tmp / "venv")
    (site / "myext").mkdir()
    shutil.copy(LIBS["sm80.so"], site / "myext" / "_C.cpython-312-x86_64-linux-gnu.so")
    (site / "myext" / "__init__.py").write_text("")
    (site / "torch" / "lib").mkdir(parents=True)
    shutil.copy(LIBS["sm80_ptx.so"], site / "torch" / "lib" / "libtorch_cuda.so")
    (site / "broken").mkdir()
    (site / "broken" / "_ext.so").write_bytes(LIBS["sm80.so"].read_bytes()[:3000])
    if PTXAS.exists():
        (site / "triton" / "backends" / "nvidia" / "bin").mkdir(parents=True)
        shutil.copy(PTXAS, site / "triton" / "backends" / "nvidia" / "bin" / "ptxas")
    env = clean_env(tmp / "home", PATH=f"{python.parent}:/usr/bin:/bin")
    (tmp / "home").mkdir()
    return python, site, env


def by_name(report):
    return {Path(b["path"]).name: b for b in report["binaries"]}


@case
def venv_site_packages_judged_for_hopper(tmp):
    python, site, env = site_tree(tmp)
    proc = run(["scan", "--python", str(python), "--arch", "9.0", "--json"], env, check_exit=1)
    report = json.loads(proc.stdout)
    check(str(site) in report["roots"], report["roots"])
    binaries = by_name(report)
    ext = binaries["_C.cpython-312-x86_64-linux-gnu.so"]
    check(ext["sass"] == ["sm_80"] and ext["ptx"] == [], ext)
    check(any(n.startswith("libcudart.so.") for n in ext["needs"]), ext["needs"])
    verdict = ext["verdicts"][0]
    check(verdict["arch"] == "sm_90" and verdict["coverage"] == "none", verdict)
    check('TORCH_CUDA_ARCH_LIST="9.0"' in verdict["fix"] and "myext" in verdict["fix"], verdict)
    torch = binaries["libtorch_cuda.so"]["verdicts"][0]
    check(torch["coverage"] == "jit" and torch["via"].startswith("compute_80 (PTX "), torch)
    check("error" in binaries["_ext.so"] and "not a valid ELF" in binaries["_ext.so"]["error"], binaries["_ext.so"])
    check(report["summary"] == {"native": 0, "jit": 1, "none": 1, "no_kernels": 0}, report["summary"])


@case
def text_report_for_ampere(tmp):
    _, site, env = site_tree(tmp)
    proc = run(["scan", str(site / "myext"), str(site / "torch"), "--arch", "8.6"], env, check_exit=0)
    out = proc.stdout
    check("  SASS   sm_80\n" in out, out)
    check("  sm_86: native via sm_80\n" in out, out)
    check("Summary    2 native, 0 jit, 0 none\n" in out, out)


@case
def triton_ptxas_that_dropped_volta(tmp):
    if not PTXAS.exists():
        print("note: no ptxas beside nvcc; Triton case not checked")
        return
    python, site, env = site_tree(tmp)
    release = run(["scan", "--python", str(python), "--arch", "7.0", "--json"], env, check_exit=1)
    triton = json.loads(release.stdout)["triton"]
    check(triton["ptxas"] == str(site / "triton/backends/nvidia/bin/ptxas"), triton)
    check(triton["chosen_by"] == "bundled with triton", triton)
    check(triton["release"], f"no release read from {PTXAS}: {triton}")
    major = int(triton["release"].split(".")[0])
    if major >= 13:  # CUDA 13's ptxas no longer compiles for Volta
        check(triton["problems"] and "sm_70" in triton["problems"][0], triton)
    env["TRITON_PTXAS_PATH"] = str(PTXAS)
    chosen = json.loads(run(["scan", "--python", str(python), "--arch", "9.0", "--json"], env).stdout)["triton"]
    check(chosen["chosen_by"] == "TRITON_PTXAS_PATH" and chosen["problems"] == [], chosen)
    # A wrapper script on PATH, as sites and containers have, is read through to its ptxas.
    wrapper = tmp / "bin" / "ptxas"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {PTXAS} "$@"\n')
    env["TRITON_PTXAS_PATH"] = str(wrapper)
    through = json.loads(run(["scan", "--python", str(python), "--arch", "7.0", "--json"], env).stdout)["triton"]
    check(through["ptxas"] == str(wrapper) and through["runs"] == str(PTXAS)
          and through["release"] == triton["release"], through)
    text = run(["scan", "--python", str(python), "--arch", "9.0"], env).stdout
    check(f"(TRITON_PTXAS_PATH, a script running {PTXAS}, release {triton['release']})" in text, text)


@case
def bad_arch_is_a_usage_error(tmp):
    (tmp / "home").mkdir()
    proc = run(["scan", str(tmp), "--arch", "ampere"], clean_env(tmp / "home"))
    expect_error(proc, 2, "--arch ampere", "compute capability")


def torch_without(tmp, arch_gencode="sm80.so"):
    """A site-packages whose torch/lib/libtorch_cuda.so carries sm_80 SASS only."""
    site = tmp / "site-packages"
    (site / "torch" / "lib").mkdir(parents=True)
    shutil.copy(LIBS[arch_gencode], site / "torch" / "lib" / "libtorch_cuda.so")
    (tmp / "home").mkdir(exist_ok=True)
    return site


def torch_fix(site, arch, env):
    report = json.loads(run(["scan", str(site), "--arch", arch, "--json"], env, check_exit=1).stdout)
    verdict = report["binaries"][0]["verdicts"][0]
    check(verdict["coverage"] == "none", verdict)
    return verdict["fix"]


@case
def torch_index_follows_the_architecture(tmp):
    site = torch_without(tmp)
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin")
    # CUDA 13 dropped Volta: the newest wheel for sm_70 is a CUDA 12 one.
    volta = torch_fix(site, "7.0", env)
    check("torch 2.14 cu126: pip install torch --index-url https://download.pytorch.org/whl/cu126" in volta, volta)
    check("cu13" not in volta, volta)
    hopper = torch_fix(site, "9.0", env)
    check("torch 2.15 cu132: pip install torch --index-url https://download.pytorch.org/whl/cu132" in hopper, hopper)
    blackwell = torch_fix(site, "12.0", env)
    check("https://download.pytorch.org/whl/cu132" in blackwell and 'TORCH_CUDA_ARCH_LIST="12.0"' in blackwell,
          blackwell)


@case
def torch_index_the_driver_here_runs(tmp):
    if not FAKE_DRIVER:
        print("note: CUDAENV_FAKE_DRIVER is not set; the driver case is not checked")
        return
    site = torch_without(tmp)
    # Driver 470 (CUDA 11.4): CUDA 11 wheels run through minor-version compatibility, 12 and 13 do not.
    root = fixture_machine("doctor-toolkit-mismatch", tmp / "machines")
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin", CUDAENV_SYSROOT=root)
    fix = torch_fix(site, "9.0", env)
    check("cu118: pip install torch --index-url https://download.pytorch.org/whl/cu118" in fix, fix)


def nvidia_wheel(site, files):
    """An NVIDIA-style wheel installed in `site`: nvidia/cufft/lib/ holding `files` (name: source),
    listed by its dist-info RECORD, whose METADATA names the distribution nvidia-cufft."""
    lib = site / "nvidia" / "cufft" / "lib"
    lib.mkdir(parents=True)
    info = site / "nvidia_cufft-12.0.0.61.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cufft\nVersion: 12.0.0.61\n\nbody\n")
    for name, source in files.items():
        shutil.copy(source, lib / name)
    (info / "RECORD").write_text("".join(f"nvidia/cufft/lib/{name},sha256=x,1\n" for name in files))
    return lib


@case
def a_cubin_without_kernels_needs_no_gpu_code(tmp):
    site = tmp / "site-packages"
    lib = nvidia_wheel(site, {"libcufftw.so.12": LIBS["no_kernels.so"], "libcufft.so.12": LIBS["sm80.so"]})
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin")
    proc = run(["scan", str(lib / "libcufftw.so.12"), "--arch", "9.0"], env, check_exit=0)
    check("  SASS   sm_75 (no kernels)\n" in proc.stdout, proc.stdout)
    check("  sm_90: no kernels (its GPU code defines no kernels: nothing runs on the GPU)\n" in proc.stdout,
          proc.stdout)
    check("Summary    0 native, 0 jit, 0 none, 1 no kernels\n" in proc.stdout, proc.stdout)
    report = json.loads(run(["scan", str(site), "--arch", "9.0", "--json"], env, check_exit=1).stdout)
    binaries = by_name(report)
    fftw = binaries["libcufftw.so.12"]
    check(fftw["sass_without_kernels"] == ["sm_75"] and fftw["verdicts"][0]["coverage"] == "no_kernels", fftw)
    # A library of the same wheel that does lack sm_90 names the distribution pip knows.
    fix = binaries["libcufft.so.12"]["verdicts"][0]["fix"]
    check(fix.startswith("rebuild nvidia-cufft with sm_90"), fix)
    check(report["summary"] == {"native": 0, "jit": 0, "none": 1, "no_kernels": 1}, report["summary"])


@case
def nvidias_own_libcufftw_is_not_flagged(tmp):
    real = Path("/usr/local/cuda/lib64/libcufftw.so.12")
    if not real.is_file():
        print(f"note: no {real} here; not checked")
        return
    (tmp / "home").mkdir()
    report = json.loads(run(["scan", str(real), "--arch", "9.0", "--arch", "12.0", "--json"],
                            clean_env(tmp / "home"), check_exit=0).stdout)
    verdicts = report["binaries"][0]["verdicts"]
    check([v["coverage"] for v in verdicts] == ["no_kernels", "no_kernels"] and not verdicts[0]["fix"], verdicts)


OLD_PTXAS = Path(os.environ.get("CUDAENV_TEST_CACHE", Path.home() / ".cache/cudaenv-ci/downloads")) \
    / "debian-apt/cuda-11.8-root/usr/bin/ptxas"


@case
def triton_fix_points_at_the_active_toolkits_ptxas(tmp):
    if not (OLD_PTXAS.exists() and PTXAS.exists()):
        print(f"note: needs CUDA 11.8's ptxas ({OLD_PTXAS}, unpacked by the CUDA 11 tests) and nvcc's; not checked")
        return
    python, site = make_venv(tmp / "venv")
    bundled = site / "triton/backends/nvidia/bin"
    bundled.mkdir(parents=True)
    shutil.copy(OLD_PTXAS, bundled / "ptxas")  # CUDA 11.8's: predates Blackwell (sm_120, CUDA 12.8)
    (tmp / "home").mkdir()
    toolkit = PTXAS.parent.parent
    env = clean_env(tmp / "home", PATH=f"{python.parent}:/usr/bin:/bin", CUDA_HOME=toolkit)
    proc = run(["scan", "--python", str(python), "--arch", "12.0"], env, check_exit=1)
    check("ptxas 11.8 predates sm_120, which needs CUDA 12.8 or newer" in proc.stdout, proc.stdout)
    triton = json.loads(run(["scan", "--python", str(python), "--arch", "12.0", "--json"], env).stdout)["triton"]
    check(triton["fix"].startswith(f"export TRITON_PTXAS_PATH={PTXAS} (the active toolkit's ptxas ")
          and triton["fix"].endswith(" knows sm_120)"), triton)
    # Following the fix clears the problem.
    env["TRITON_PTXAS_PATH"] = str(PTXAS)
    run(["scan", "--python", str(python), "--arch", "12.0"], env, check_exit=0)


finish()
