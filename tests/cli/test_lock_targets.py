"""Declared targets at use time: `cudaenv env --target NAME` prints a target's build settings for a
CI machine without its GPUs (shell code and JSON; from the lock once there is one), and `verify`
on a fixture machine that matches no declared target says so and names the closest."""

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from harness import (DEBIAN_PATH, BINARY, FAKE_DRIVER, FIXTURES, SKIP, case, check, clean_env, expect_error, finish,
                     fixture_machine, mirror_server)
from synthetic_mirror import toolkit_release

PROJECT = """cuda = "12.4"
[targets.a100]
driver = "535.104.05"
arch = ["8.0"]
[targets.l40]
driver = "550.54.15"
arch = ["8.9", "8.0"]
"""


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env={**env, "PWD": str(cwd)}, cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def project_in(tmp, text=PROJECT):
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(text)
    return project


@case
def env_target_prints_the_declared_targets_build_settings(tmp):
    project = project_in(tmp)
    (tmp / "sysroot").mkdir()
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot")
    proc = cudaenv(["env", "--target", "l40"], env, project)
    check(proc.returncode == 0, proc.stderr)
    check("export CUDAENV_TARGET='l40';" in proc.stdout, proc.stdout)
    check("export TORCH_CUDA_ARCH_LIST='8.0;8.9';" in proc.stdout, proc.stdout)
    check("export CMAKE_CUDA_ARCHITECTURES='80;89';" in proc.stdout, proc.stdout)
    sourced = subprocess.run(["bash", "-c", 'eval "$1"; echo "$TORCH_CUDA_ARCH_LIST|$CMAKE_CUDA_ARCHITECTURES"', "-",
                              proc.stdout], capture_output=True, text=True, timeout=60)
    check(sourced.stdout == "8.0;8.9|80;89\n", f"bash reads it back: {sourced.stdout!r}")
    fish = cudaenv(["env", "--target", "a100", "--shell", "fish"], env, project)
    check("set -gx TORCH_CUDA_ARCH_LIST" in fish.stdout and "8.0" in fish.stdout, fish.stdout)
    out = json.loads(cudaenv(["env", "--target", "a100", "--shell", "json"], env, project).stdout)
    check(out["target"] == "a100" and out["driver"] == "535.104.05" and out["mode"] is None, str(out))
    check(out["variables"] == {"CUDAENV_TARGET": "a100", "TORCH_CUDA_ARCH_LIST": "8.0",
                               "CMAKE_CUDA_ARCHITECTURES": "80"}, str(out))
    expect_error(cudaenv(["env", "--target", "h100"], env, project), 3,
                 'declares no target "h100"')
    # Once locked, the settings come from the lock, with the target's driver mode.
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["lock", "--mirror", url], env, project)
        check(proc.returncode == 0, proc.stderr)
    out = json.loads(cudaenv(["env", "--target", "a100", "--shell", "json"], env, project).stdout)
    check(out["mode"] == "minor-compat" and out["source"] == str(project / ".cudaenv.lock"), str(out))


@case
def verify_on_a_machine_matching_no_target_names_the_closest(tmp):
    if not FAKE_DRIVER:
        print("skip: fixture machines need the fake driver library")
        return
    machine = fixture_machine("dgx-h100-580", tmp / "machines")  # 2x H100 (9.0), driver 580
    root = tmp / "cudaenv"
    shutil.copytree(FIXTURES / "toolkits" / "nvcc-rejects-gcc", root / "toolkits" / "12.2.2", symlinks=True)
    env = clean_env(tmp, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=root, PATH=DEBIAN_PATH)
    project = project_in(tmp)
    proc = cudaenv(["verify", "12.2"], env, project)
    check(proc.returncode == 7, f"the stand-in toolkit fails as usual: {proc.returncode} {proc.stderr}")
    check(f"cudaenv: note: this machine matches none of the targets {project}/.cudaenv declares; the "
          "closest is a100: its arch list has no 9.0\n" in proc.stderr, proc.stderr)
    check(proc.stderr.count("has no 9.0") == 1, f"two identical H100s, said once: {proc.stderr}")
    (project / ".cudaenv").write_text(PROJECT + '[targets.h100]\ndriver = "550.54.15"\narch = ["9.0"]\n')
    proc = cudaenv(["verify", "12.2"], env, project)
    check("matches none" not in proc.stderr, f"an H100 machine matches [targets.h100]: {proc.stderr}")


@case
def current_on_a_machine_whose_driver_is_below_every_floor_names_the_closest_target(tmp):
    if not FAKE_DRIVER:
        print("skip: fixture machines need the fake driver library")
        return
    machine = fixture_machine("dgx-h100-580", tmp / "machines")  # driver 580.x
    root = tmp / "cudaenv"
    shutil.copytree(FIXTURES / "toolkits" / "nvcc-rejects-gcc", root / "toolkits" / "12.2.2", symlinks=True)
    env = clean_env(tmp, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=root, PATH=DEBIAN_PATH)
    project = project_in(tmp, 'cuda = "12.2"\n[targets.b200]\ndriver = "595.10.01"\narch = ["10.0"]\n'
                              '[targets.gb200]\ndriver = "600.10.01"\narch = ["10.0"]\n')
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 0 and proc.stdout.startswith("12.2.2 (from"), f"{proc.stdout} {proc.stderr}")
    check("is below the floor of every target" in proc.stderr and "the closest is b200 (driver >= 595.10.01)"
          in proc.stderr, proc.stderr)
    (project / ".cudaenv").write_text('cuda = "12.2"\n[targets.h100]\ndriver = "550.54.15"\narch = ["9.0"]\n')
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 0 and "note:" not in proc.stderr, f"a floor this driver meets: {proc.stderr}")


@case
def the_hook_says_once_per_change_that_the_driver_is_below_every_floor(tmp):
    # Both programs that answer hook-env: the full one and the shim the shell hook calls.
    for program in (Path(BINARY), Path(BINARY).parent / "cudaenv-shim"):
        work = tmp / program.name
        work.mkdir()
        machine = fixture_machine("dgx-h100-580", work / "machines")  # driver 580.x, read from /proc
        root = work / "cudaenv"
        shutil.copytree(FIXTURES / "toolkits" / "nvcc-rejects-gcc", root / "toolkits" / "12.2.2",
                        symlinks=True)
        env = clean_env(work, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=root, PATH=DEBIAN_PATH)
        project = project_in(work, 'cuda = "12.2"\n[targets.b200]\ndriver = "595.10.01"\narch = ["10.0"]\n')
        hook = f'eval "$("{program}" hook-env --shell bash)"'
        # Entering the project, two prompts with nothing changed, then an edited file.
        script = (f'cd "{project}" && {hook} && {hook} && {hook} && echo "$CUDA_HOME" && '
                  f'printf \'cuda = "12.2"\\n[targets.gb200]\\ndriver = "600.10.01"\\narch = ["10.0"]\\n\' '
                  f'> .cudaenv && {hook} && {hook}')
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], env=env, capture_output=True,
                              text=True, timeout=60)
        check(proc.returncode == 0 and proc.stdout.strip().endswith("toolkits/12.2.2"),
              f"{program.name}: {proc.stdout} {proc.stderr}")
        notes = [line for line in proc.stderr.splitlines() if "is below the floor of every target" in line]
        check(len(notes) == 2, f"{program.name}: once on entering, once after the edit: {proc.stderr}")
        check("the closest is b200 (driver >= 595.10.01)" in notes[0], notes)
        check("the closest is gb200 (driver >= 600.10.01)" in notes[-1], notes)

@case
def a_toolkit_that_needs_an_older_gcc_gets_cudahostcxx_in_the_lock_and_env_target(tmp):
    # CUDA 11.8 accepts GCC up to 11; the newest LTS (Ubuntu 24.04) installs GCC 13 as c++.
    project = project_in(tmp, 'cuda = "11.8"\n[targets.v100]\ndriver = "535.104.05"\narch = ["7.0"]\n')
    (tmp / "sysroot").mkdir()
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot")
    toolkit_release(tmp / "mirror", "11.8.0", "11.8.89")
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["lock", "--mirror", url], env, project)
        check(proc.returncode == 0, proc.stderr)
        target = tomllib.loads((project / ".cudaenv.lock").read_text())["targets"]["v100"]
        check(target.get("CUDAHOSTCXX") == "g++-11", str(target))
        proc = cudaenv(["env", "--target", "v100"], env, project)
        check("export CUDAHOSTCXX='g++-11';" in proc.stdout, proc.stdout)
        out = json.loads(cudaenv(["env", "--target", "v100", "--shell", "json"], env, project).stdout)
        check(out["variables"].get("CUDAHOSTCXX") == "g++-11", str(out))
        # CUDA 12.4 accepts the default GCC 13: nothing to set.
        (project / ".cudaenv").write_text('cuda = "12.4"\n[targets.v100]\ndriver = "535.104.05"\narch = ["7.0"]\n')
        check(cudaenv(["lock", "--mirror", url], env, project).returncode == 0, "12.4 locks")
        target = tomllib.loads((project / ".cudaenv.lock").read_text())["targets"]["v100"]
        check("CUDAHOSTCXX" not in target, str(target))
        check("CUDAHOSTCXX" not in cudaenv(["env", "--target", "v100"], env, project).stdout, "not printed")


@case
def current_and_the_hook_name_a_gpu_arch_no_target_lists_from_the_last_full_probe(tmp):
    if not FAKE_DRIVER:
        print("skip: fixture machines need the fake driver library")
        return
    machine = fixture_machine("dgx-h100-580", tmp / "machines")  # 2x H100 (9.0), driver 580 in /proc
    boot_id = machine / "proc" / "sys" / "kernel" / "random" / "boot_id"
    boot_id.parent.mkdir(parents=True, exist_ok=True)
    boot_id.write_text("8d1f0c52-4f55-4b0e-9a3c-0d4b2f7e6a11\n")
    root = tmp / "cudaenv"
    shutil.copytree(FIXTURES / "toolkits" / "nvcc-rejects-gcc", root / "toolkits" / "12.2.2", symlinks=True)
    env = clean_env(tmp, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=root, PATH=DEBIAN_PATH)
    # a100's floor (535) is met: only the GPUs' arch keeps this machine out.
    project = project_in(tmp, 'cuda = "12.2"\n[targets.a100]\ndriver = "535.104.05"\narch = ["8.0"]\n')
    note = (f"note: this machine matches none of the targets {project}/.cudaenv declares; the closest is "
            "a100: its arch list has no 9.0\n")
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 0 and "note:" not in proc.stderr, f"no full probe yet, nothing known: {proc.stderr}")
    check(cudaenv(["info"], env, project).returncode == 0, "info probes the GPUs through the driver library")
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 0 and "cudaenv: " + note in proc.stderr, proc.stderr)
    check(proc.stderr.count("has no 9.0") == 1, proc.stderr)
    for program in (Path(BINARY), Path(BINARY).parent / "cudaenv-shim"):
        hook = f'eval "$("{program}" hook-env --shell bash)"'
        script = f'cd "{project}" && {hook} && {hook} && {hook} && echo "$CUDA_HOME"'
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], env=env, capture_output=True,
                              text=True, timeout=60)
        check(proc.returncode == 0 and proc.stdout.strip().endswith("toolkits/12.2.2"),
              f"{program.name}: {proc.stdout} {proc.stderr}")
        check(proc.stderr.count(note) == 1, f"{program.name}: once per version of .cudaenv: {proc.stderr}")
    # After a reboot the record is stale: better nothing than the wrong GPUs.
    boot_id.write_text("0b6e2d7a-93c1-4d5e-8f00-5a1c2b3d4e5f\n")
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 0 and "note:" not in proc.stderr, f"another boot: {proc.stderr}")


finish()
