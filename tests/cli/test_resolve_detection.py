"""`cudaenv resolve`'s detection on fixture machines: the driver version comes from the kernel
module's file, NVML is started only for the GPUs' architectures, and a FIFO put where
/proc/driver/nvidia/version belongs blocks neither resolve nor the prompt hook."""

import json
import os
import sys
from pathlib import Path

from harness import FAKE_DRIVER, SKIP, case, check, clean_env, finish, fixture_machine, run

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)

LIBS = "usr/lib/x86_64-linux-gnu"
PATH = "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def machine(tmp, nvml_driver=None, broken_nvml=False):
    """The DGX H100 fixture (kernel module 580.95.05). `nvml_driver`: what its NVML says instead;
    `broken_nvml`: libnvidia-ml.so.1 and libcuda.so.1 are not libraries at all."""
    root = fixture_machine("dgx-h100-580", tmp / "machines")
    libs = root / LIBS
    if nvml_driver:
        ini = libs / "fake-driver.ini"
        ini.write_text(ini.read_text().replace("driver_version=580.95.05",
                                               f"driver_version={nvml_driver}"))
    if broken_nvml:
        for name in ("libnvidia-ml.so.580.95.05", "libcuda.so.580.95.05"):
            (libs / name).write_text("not a shared library\n")
    home = tmp / "home"
    home.mkdir()
    return root, clean_env(home, CUDAENV_SYSROOT=root, PATH=PATH)


def target(env, *args):
    proc = run(["resolve", "--torch", "2.8", "--json", *args], env, timeout=30)
    check(proc.returncode in (0, 4), f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout)["target"]


@case
def the_kernel_file_answers_when_no_architecture_is_needed(tmp):
    _, env = machine(tmp, nvml_driver="575.57.08")
    # --arch given: the driver is the kernel module's, NVML (which would say 575.57.08) not started.
    answer = target(env, "--arch", "9.0")
    check(answer["driver"] == "580.95.05" and answer["driver_source"] == "detected", answer)
    # The architectures needed: NVML is asked, and lists the GPUs.
    answer = target(env)
    check(answer["driver"] == "575.57.08" and answer["gpus"] == ["9.0"], answer)
    check(answer["gpu_source"] == "detected", answer)


@case
def a_broken_nvml_still_answers_the_driver_version(tmp):
    _, env = machine(tmp, broken_nvml=True)
    for args in (["--arch", "9.0"], []):
        answer = target(env, *args)
        check(answer["driver"] == "580.95.05" and answer["driver_source"] == "detected",
              f"{args}: {answer}")
    check(target(env)["gpus"] == [], "no library listed the GPUs")


@case
def a_fifo_in_place_of_the_proc_file_does_not_block(tmp):
    root, env = machine(tmp)
    proc_file = root / "proc/driver/nvidia/version"
    proc_file.unlink()
    os.mkfifo(proc_file)
    # The /sys file still names the module's version.
    answer = target(env, "--arch", "9.0")
    check(answer["driver"] == "580.95.05", answer)
    (root / "sys/module/nvidia/version").unlink()
    os.mkfifo(root / "sys/module/nvidia/version")
    answer = target(env, "--arch", "9.0")
    check(answer["driver"] == "580.95.05", f"NVML answers when no kernel file does: {answer}")
    proc = run(["hook-env", "--shell", "bash"], env, timeout=30)
    check(proc.returncode == 0, f"hook-env exit {proc.returncode}: {proc.stderr}")


@case
def nvml_answers_once_per_boot_and_the_record_answers_after(tmp):
    root, env = machine(tmp)
    boot_id = root / "proc/sys/kernel/random/boot_id"
    boot_id.parent.mkdir(parents=True, exist_ok=True)
    boot_id.write_text("8d1f0c52-4f55-4b0e-9a3c-0d4b2f7e6a11\n")
    data_root = tmp / "home" / ".local" / "share" / "cudaenv"
    data_root.mkdir(parents=True)
    check(target(env)["gpus"] == ["9.0"], "NVML lists the GPUs the first time")
    check((data_root / "cache" / "gpu-archs").is_file(), "resolve left the boot's GPU record")
    for name in ("libnvidia-ml.so.580.95.05", "libcuda.so.580.95.05"):
        (root / LIBS / name).write_text("not a shared library\n")
    answer = target(env)
    check(answer["gpus"] == ["9.0"] and answer["gpu_source"] == "detected",
          f"the second resolve of this boot needs no driver library: {answer}")
    boot_id.write_text("00000000-1111-4222-8333-444444444444\n")
    check(target(env)["gpus"] == [], "after a reboot the old record names no GPU")


@case
def only_the_default_gcc_is_run(tmp):
    root, env = machine(tmp)
    bin_dir = root / "opt/tools/bin"
    bin_dir.mkdir(parents=True)
    marker = tmp / "other-compiler-ran"
    (bin_dir / "gcc").write_text("#!/bin/sh\necho 11.4.0\n")
    for other in ("g++", "gcc-12", "g++-12", "clang", "clang++-17"):
        (bin_dir / other).write_text(f"#!/bin/sh\ntouch '{marker}'\necho 12.2.0\n")
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    env = dict(env, PATH="/opt/tools/bin:" + PATH)
    answer = target(env, "--arch", "9.0")
    check(answer["gcc"] == "11.4.0", f"the first gcc on PATH is the one resolved for: {answer}")
    check(not marker.exists(), "no other compiler was started")


finish()
