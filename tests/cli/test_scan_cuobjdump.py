"""`cudaenv scan` agrees with NVIDIA's cuobjdump: libraries built here with the real nvcc for
SASS only, SASS + PTX, PTX only and several architectures at once list the same SASS
architectures and PTX targets in `scan --json` as in `cuobjdump --list-elf --list-ptx`.

cuobjdump comes from NVIDIA's nvidia-cuda-cuobjdump wheel on PyPI (cached under
$CUDAENV_TEST_CACHE/wheels): the toolkit on a machine need not carry it, so the comparison runs
everywhere the wheel can be fetched once."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import repack
from harness import SKIP, case, check, clean_env, finish, run
from scan_fixtures import build_cuda_libraries, nvcc_and_scratch

# The oldest CUDA 13 cuobjdump NVIDIA publishes as a wheel; it reads what nvcc 13.0 writes.
CUOBJDUMP_PIN = {"nvidia-cuda-cuobjdump": "13.2.51"}
CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path.home() / ".cache/cudaenv-ci/downloads"))
VARIANTS = {
    "sm75.so": "arch=compute_75,code=sm_75",
    "sm80_ptx.so": "arch=compute_80,code=[sm_80,compute_80]",
    "ptx_only.so": "arch=compute_75,code=compute_75",
    "several.so": "arch=compute_80,code=[sm_80,sm_86,sm_90,compute_80]",
}

NVCC, WORK = nvcc_and_scratch("cudaenv-cuobjdump-")


def cuobjdump_from_wheel():
    try:
        wheel = repack.download_wheels(str(CACHE / "wheels"), CUOBJDUMP_PIN)["nvidia-cuda-cuobjdump"]
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        print(f"skip: the nvidia-cuda-cuobjdump wheel could not be fetched ({error})")
        return None
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if n.endswith("/bin/cuobjdump"))
        target = Path(archive.extract(member, WORK / "wheel"))
    target.chmod(0o755)
    return target


def listed_by_cuobjdump(cuobjdump, library):
    """{"sm_75", "compute_80", …} from lines like `ELF file 1: x.1.sm_75.cubin`."""
    proc = subprocess.run([str(cuobjdump), "--list-elf", "--list-ptx", str(library)],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0, f"cuobjdump read {library.name}: {proc.stderr}")
    names = set()
    for line in proc.stdout.splitlines():
        if ".sm_" not in line:
            continue
        arch = line[line.rindex(".sm_") + 4:].split(".")[0]
        names.add(("compute_" if line.endswith(".ptx") else "sm_") + arch)
    return names


def listed_by_scan(library, env):
    report = json.loads(run(["scan", str(library), "--arch", "9.0", "--json"], env).stdout)
    (binary,) = report["binaries"]
    return set(binary["sass"]) | {ptx["arch"] for ptx in binary["ptx"]}


CUOBJDUMP = cuobjdump_from_wheel()
if CUOBJDUMP is None:
    sys.exit(SKIP)
LIBRARIES = build_cuda_libraries(NVCC, WORK / "built", VARIANTS)


@case
def scan_lists_what_cuobjdump_lists(tmp):
    env = clean_env(tmp)
    for name, gencode in VARIANTS.items():
        expected = listed_by_cuobjdump(CUOBJDUMP, LIBRARIES[name])
        check(expected, f"cuobjdump lists GPU code in {name} ({gencode})")
        check(listed_by_scan(LIBRARIES[name], env) == expected,
              f"{name} ({gencode}): scan {sorted(listed_by_scan(LIBRARIES[name], env))}, "
              f"cuobjdump {sorted(expected)}")


@case
def the_several_architecture_build_is_judged_per_gpu(tmp):
    env = clean_env(tmp)
    report = json.loads(run(["scan", str(LIBRARIES["several.so"]), "--arch", "8.9", "--arch", "9.0",
                             "--arch", "12.0", "--json"], env).stdout)
    verdicts = {v["arch"]: v["coverage"] for v in report["binaries"][0]["verdicts"]}
    # sm_89 runs sm_86's SASS; sm_90 has its own; Blackwell compiles compute_80's PTX.
    check(verdicts == {"sm_89": "native", "sm_90": "native", "sm_120": "jit"}, verdicts)


finish()
