"""`cudaenv info` on fixture machines (tests/fixtures/machines): the real binary, pointed at a copy
of each machine with CUDAENV_SYSROOT, must report it exactly, in JSON and in text."""

import sys

from harness import DEBIAN_PATH, FAKE_DRIVER, SKIP, case, check, clean_env, finish, fixture_machine, run, run_json

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)


def machine_env(tmp, name, **variables):
    """The environment of that machine's user, with cudaenv pointed at a fresh copy of it."""
    root = fixture_machine(name, tmp / "machines")
    home = tmp / "home"
    home.mkdir()
    return root, clean_env(home, CUDAENV_SYSROOT=root, **variables)


def toolkit_lines(report):
    """'version path source nvcc [wheels] via kind:path, ...' per toolkit, newest first."""
    lines = []
    for toolkit in report["toolkits"]:
        via = ", ".join(f"{o['kind']}:{o['path']}" for o in toolkit["origins"])
        wheels = " [wheels]" if toolkit["from_wheels"] else ""
        lines.append(f"{toolkit['version']} {toolkit['path']} {toolkit['version_source']} "
                     f"nvcc {toolkit['nvcc_version']}{wheels} via {via}")
    return lines


def compiler_lines(report):
    return [f"{c['name']} {c['path']} {c['version']}" for c in report["compilers"]]


def check_equal(actual, expected, what):
    check(actual == expected, f"{what}:\n  expected {expected!r}\n  actual   {actual!r}")


def check_lines_in(text, expected_lines):
    for line in expected_lines:
        check(line in text, f"text report lacks {line!r}:\n{text}")


@case
def nouveau_machine_json(tmp):
    root, env = machine_env(tmp, "nouveau-535-alternatives",
                            PATH="/usr/local/cuda/bin:" + DEBIAN_PATH,
                            LD_LIBRARY_PATH="/usr/local/cuda/lib64")
    report = run_json(["info"], env)
    check_equal(report["driver"], {
        "version": "535.104.05", "cuda_version": "12.2", "source": "library-file-name",
        "library": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "open_kernel_module": False, "loaded": False}, "driver")
    check_equal(report["gpus"], [], "gpus")
    check_equal(report["modules"], {
        "readable": True, "nvidia": False, "nvidia_uvm": False, "nvidia_modeset": False,
        "nvidia_drm": False, "nouveau": True, "device_nodes": []}, "modules")
    check_equal(toolkit_lines(report), [
        "12.2.2 /usr/local/cuda-12.2 version.json nvcc 12.2.140 via "
        "versioned-dir:/usr/local/cuda-12, versioned-dir:/usr/local/cuda-12.2",
        "11.8.0 /usr/local/cuda-11.8 version.json nvcc 11.8.89 via "
        "versioned-dir:/usr/local/cuda-11, versioned-dir:/usr/local/cuda-11.8, "
        "default-link:/usr/local/cuda, PATH:/usr/local/cuda-11.8"], "toolkits")
    check_equal([t["release"] for t in report["toolkits"]], ["12.2", "11.8"], "toolkit releases")
    check_equal(report["default_link"], {
        "path": "/usr/local/cuda",
        "chain": ["/usr/local/cuda", "/etc/alternatives/cuda", "/usr/local/cuda-11.8"],
        "target": "/usr/local/cuda-11.8", "dangling": False}, "default_link")
    check_equal(compiler_lines(report)[:1], ["g++ /usr/bin/g++ 12.3.0"], "g++ through alternatives")
    check_equal(report["os"]["pretty_name"], "Ubuntu 22.04.4 LTS", "os pretty_name")
    check_equal(report["env"], {
        "variables": {"CUDAENV_SYSROOT": str(root)},
        "cuda_library_paths": ["/usr/local/cuda/lib64"]}, "env")
    check_equal(report["notes"], [
        "nvmlInit_v2 failed with NVML error 9",
        "cuInit failed: CUDA_ERROR_NO_DEVICE (100)",
        "NVIDIA driver 535.104.05 is installed but its kernel module is not loaded"], "notes")


@case
def nouveau_machine_text(tmp):
    _, env = machine_env(tmp, "nouveau-535-alternatives", PATH="/usr/local/cuda/bin:" + DEBIAN_PATH)
    out = run(["info"], env, check_exit=0).stdout
    check_lines_in(out, [
        "Driver     535.104.05 (installed, kernel module not loaded)  supports CUDA <= 12.2  "
        "[library-file-name]\n",
        "GPUs       none visible\n",
        "Modules    nvidia absent, nvidia_uvm absent, nouveau loaded\n",
        "Toolkits   12.2.2  /usr/local/cuda-12.2  (from version.json, nvcc 12.2.140; ",
        "           11.8.0  /usr/local/cuda-11.8  (from version.json, nvcc 11.8.89; ",
        "           /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-11.8\n",
        "Note       cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n",
    ])


@case
def dgx_machine_json(tmp):
    _, env = machine_env(tmp, "dgx-h100-580", PATH="/usr/local/cuda/bin:" + DEBIAN_PATH,
                         CUDA_HOME="/usr/local/cuda-12.4",
                         LD_LIBRARY_PATH="/usr/local/cuda-12.4/lib64")
    report = run_json(["info"], env)
    check_equal(report["driver"], {
        "version": "580.95.05", "cuda_version": "13.0", "source": "nvml",
        "library": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "open_kernel_module": True, "loaded": True}, "driver")
    h100 = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sm": "sm_90",
            "memory_bytes": 85520809984}
    check_equal(report["gpus"], [{"index": 0, **h100}, {"index": 1, **h100}], "gpus")
    check_equal(report["modules"]["device_nodes"], [
        "/dev/nvidia-caps", "/dev/nvidia-modeset", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
        "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"], "device nodes")
    check_equal(toolkit_lines(report), [
        "13.0.2 /usr/local/cuda-13.0 version.json nvcc 13.0.88 via "
        "versioned-dir:/usr/local/cuda-13.0, default-link:/usr/local/cuda, PATH:/usr/local/cuda-13.0",
        "12.4.1 /usr/local/cuda-12.4 version.json nvcc 12.4.131 via "
        "versioned-dir:/usr/local/cuda-12.4, CUDA_HOME:/usr/local/cuda-12.4"], "toolkits")
    check_equal(report["default_link"]["chain"], ["/usr/local/cuda", "/usr/local/cuda-13.0"],
                "default link chain")
    check_equal(compiler_lines(report), [
        "clang /usr/bin/clang 18.1.3", "clang++ /usr/bin/clang++ 18.1.3",
        "clang++-18 /usr/bin/clang++-18 18.1.3", "clang-18 /usr/bin/clang-18 18.1.3",
        "g++ /usr/bin/g++ 13.2.0", "g++-13 /usr/bin/g++-13 13.2.0",
        "gcc /usr/bin/gcc 13.2.0", "gcc-13 /usr/bin/gcc-13 13.2.0"], "compilers")
    check_equal(report["env"]["variables"].get("CUDA_HOME"), "/usr/local/cuda-12.4", "CUDA_HOME")
    check_equal(report["env"]["cuda_library_paths"], ["/usr/local/cuda-12.4/lib64"],
                "cuda_library_paths")
    check_equal(report["notes"], [], "notes")


@case
def dgx_machine_text(tmp):
    _, env = machine_env(tmp, "dgx-h100-580", PATH="/usr/local/cuda/bin:" + DEBIAN_PATH,
                         CUDA_HOME="/usr/local/cuda-12.4")
    out = run(["info"], env, check_exit=0).stdout
    check_lines_in(out, [
        "Driver     580.95.05  supports CUDA <= 13.0  [nvml]\n",
        "GPUs       0: NVIDIA H100 80GB HBM3  compute 9.0 (sm_90)  ",
        "           1: NVIDIA H100 80GB HBM3  compute 9.0 (sm_90)  ",
        "Modules    nvidia loaded, nvidia_uvm loaded, nouveau absent\n",
        "Toolkits   13.0.2  /usr/local/cuda-13.0  (from version.json, nvcc 13.0.88; "
        "via /usr/local/cuda-13.0, /usr/local/cuda, nvcc on PATH)\n",
        "           12.4.1  /usr/local/cuda-12.4  (from version.json, nvcc 12.4.131; "
        "via /usr/local/cuda-12.4, CUDA_HOME)\n",
        "           /usr/local/cuda -> /usr/local/cuda-13.0\n",
        "Compilers  clang 18.1.3, clang++ 18.1.3, clang++-18 18.1.3, clang-18 18.1.3, "
        "g++ 13.2.0, g++-13 13.2.0, gcc 13.2.0, gcc-13 13.2.0\n",
        "OS         Ubuntu 24.04.1 LTS, kernel 6.8.0-45-generic, x86_64\n",
        "Env        CUDA_HOME=/usr/local/cuda-12.4\n",
    ])
    check("Note" not in out, f"no notes on a working machine:\n{out}")


@case
def container_machine_json_and_text(tmp):
    _, env = machine_env(tmp, "container-open-module-proc", PATH="/usr/local/sbin:/usr/local/bin:/usr/bin")
    report = run_json(["info"], env)
    check_equal(report["driver"], {
        "version": "575.57.08", "cuda_version": None, "source": "/proc/driver/nvidia/version",
        "library": None, "open_kernel_module": True, "loaded": True}, "driver")
    check_equal(toolkit_lines(report),
                ["12.9.1 /opt/cuda nvcc --version nvcc 12.9.86 via opt-cuda:/opt/cuda"], "toolkits")
    check_equal(report["default_link"], None, "default_link")
    check_equal(report["os"], {
        "id": "arch", "id_like": None, "version_id": None, "codename": None,
        "pretty_name": "Arch Linux", "kernel": "6.15.2-arch1-1", "architecture": "x86_64"}, "os")
    out = run(["info"], env, check_exit=0).stdout
    check_lines_in(out, [
        "Driver     575.57.08  (CUDA version unknown: libcuda not loadable)  "
        "[/proc/driver/nvidia/version]\n",
        "Toolkits   12.9.1  /opt/cuda  (from nvcc --version, nvcc 12.9.86, cudart 12.9.79, "
        "release from the compatibility database; via /opt/cuda)\n",
        "OS         Arch Linux, kernel 6.15.2-arch1-1, x86_64\n",
    ])


@case
def kepler_machine_text(tmp):
    _, env = machine_env(tmp, "legacy-sysfs-kepler",
                         PATH="/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games")
    out = run(["info"], env, check_exit=0).stdout
    check_lines_in(out, [
        "Driver     470.223.02  (CUDA version unknown: libcuda not loadable)  "
        "[/sys/module/nvidia/version]\n",
        "Toolkits   11.0.228  /usr/local/cuda-11.0  (from version.txt; via /usr/local/cuda-11.0)\n",
        "           /usr/local/cuda -> /usr/local/cuda-10.2  (dangling)\n",
    ])


@case
def ci_machine_without_driver(tmp):
    _, env = machine_env(tmp, "ci-no-driver", PATH="/usr/local/cuda/bin:" + DEBIAN_PATH)
    report = run_json(["info"], env)
    check_equal(report["driver"], None, "driver")
    check_equal(toolkit_lines(report), [
        "13.0.2 /usr/local/cuda-13.0 dist-info nvcc 13.0.88 [wheels] via "
        "versioned-dir:/usr/local/cuda-13.0, default-link:/usr/local/cuda, PATH:/usr/local/cuda-13.0"],
        "toolkits")
    out = run(["info"], env, check_exit=0).stdout
    check_lines_in(out, [
        "Driver     none (no NVIDIA driver",
        "Toolkits   13.0.2  /usr/local/cuda-13.0  (from dist-info, nvcc 13.0.88, cudart 13.0.96, "
        "release from the compatibility database, assembled from NVIDIA pip wheels; ",
        "OS         Debian GNU/Linux 12 (bookworm), kernel 6.8.0-1021-azure, x86_64\n",
    ])


finish()
