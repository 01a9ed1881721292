"""`cudaenv arch --format NAME`: each ecosystem's answer read back by what reads it. CMake configures
a real CUDA project with the printed CMAKE_CUDA_ARCHITECTURES (nvcc from PATH or /usr/local/cuda);
bash evaluates the conda and torch lines; pixi's table goes through tomllib; Nix's attribute set,
Spack's spec, TORCH_CUDA_ARCH_LIST and conda's overrides through their documented grammars
(docs/arch.md names the sources). Machines are fixture machines with the fake driver: the DGX (two
H100s, driver 580.95.05, CUDA 13.0), the same with an A100 among them, one whose GPU name is hostile,
and one without a driver; targets come from a .cudaenv, by architecture and by GPU model."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from harness import (DEBIAN_PATH, FAKE_DRIVER, SKIP, case, check, clean_env, expect_error, finish,
                     fixture_machine, run_in)

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"

# conda's CONDA_OVERRIDE_CUDA is a conda version; CEP 46's override is VERSION or VERSION=MODEL with
# VERSION `^[0-9]+\.[0-9]+$` and MODEL `[a-zA-Z0-9_.+]*` (the nvidia-virtual-packages plugin's check).
CONDA_CUDA = re.compile(r"^[0-9]+(\.[0-9]+)*$")
CEP46_ARCH = re.compile(r"^[0-9]+\.[0-9]+(=[a-zA-Z0-9_.+]*)?$")
# torch.utils.cpp_extension splits TORCH_CUDA_ARCH_LIST on ';' (spaces become ';') and takes
# entries "X.Y", optionally with an arch letter, optionally with "+PTX".
TORCH_ENTRY = re.compile(r"^[0-9]+\.[0-9]+[af]?(\+PTX)?$")
# Spack's CudaPackage: `+cuda` and `cuda_arch=` a comma list of values from cuda_arch_values
# (the capability's digits, "90", "100a"); a dependency constraint `^cuda@:X.Y`.
SPACK_SPEC = re.compile(r"^\+cuda cuda_arch=(?P<archs>[0-9]+[af]?(,[0-9]+[af]?)*)( \^cuda@:(?P<cuda>[0-9]+\.[0-9]+))?$")


def machine(tmp, gpus=None, name="dgx-h100-580"):
    """A fixture machine (its GPUs replaced by `gpus`: (name, capability) pairs) and its env."""
    root = fixture_machine(name, tmp / "machines")
    if gpus is not None:
        for ini in root.rglob("fake-driver.ini"):
            kept = [line for line in ini.read_text().splitlines() if not line.startswith("gpu=")]
            ini.write_text("\n".join(kept + [f"gpu={gpu}|{cc}|85899345920" for gpu, cc in gpus]) + "\n")
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return clean_env(home, CUDAENV_SYSROOT=root, CUDAENV_ROOT=tmp / "root", PATH=DEBIAN_PATH)


def arch(env, cwd, *args, expect=0):
    return run_in(["arch", *args], env, cwd, expect=expect)


def bash_eval(lines, names):
    """What `eval "$(cudaenv arch --format ...)"` leaves in the environment of a child process."""
    script = lines + "\n" + "".join(f'printf "%s\\0" "${{{name}-UNSET}}"\n' for name in names)
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, env={"PATH": DEBIAN_PATH})
    check(out.returncode == 0 and not out.stderr, f"bash evaluates {lines!r}: {out.stderr!r}")
    # Exported, not merely set: a child (conda, pip, python setup.py) sees them.
    child = subprocess.run(["bash", "-c", lines + "\nenv"], capture_output=True, text=True, timeout=30,
                           env={"PATH": DEBIAN_PATH})
    for name in names:
        check(f"\n{name}=" in "\n" + child.stdout, f"{name} is exported to child processes: {lines!r}")
    return dict(zip(names, out.stdout.split("\0")))


def nix_attrset(text):
    """Parses the subset of the Nix language an attribute set of booleans, strings and lists of
    strings uses (nix.dev's language reference: `{ name = value; ... }`, lists `[ a b ]` separated
    by whitespace, strings in double quotes); raises ValueError on anything else."""
    tokens = re.findall(r'"(?:[^"\\$]|\\.)*"|[{}\[\];=]|[A-Za-z_][A-Za-z0-9_\'-]*|\S', text)
    position = 0

    def take(expected=None):
        nonlocal position
        if position >= len(tokens):
            raise ValueError("unexpected end")
        token = tokens[position]
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r}, got {token!r}")
        position += 1
        return token

    def value():
        token = take()
        if token.startswith('"'):
            return token[1:-1]
        if token in ("true", "false"):
            return token == "true"
        if token == "[":
            items = []
            while tokens[position] != "]":
                items.append(value())
            take("]")
            return items
        raise ValueError(f"unexpected {token!r}")

    take("{")
    out = {}
    while tokens[position] != "}":
        name = take()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_'-]*", name):
            raise ValueError(f"bad attribute name {name!r}")
        take("=")
        out[name] = value()
        take(";")
    take("}")
    if position != len(tokens):
        raise ValueError(f"trailing {tokens[position:]}")
    return out


def find_nvcc():
    found = shutil.which("nvcc")
    if found:
        return Path(found)
    default = Path("/usr/local/cuda/bin/nvcc")
    return default if default.exists() else None


def cmake_accepts(tmp, printed):
    """Configures a CUDA project, pasting the printed -D into a shell command line as a user would;
    returns the CMAKE_CUDA_ARCHITECTURES the cache holds and the architectures nvcc compiled for."""
    project = tmp / "cmake-project"
    project.mkdir(exist_ok=True)
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(probe LANGUAGES CUDA)\n"
        "add_library(kernel OBJECT kernel.cu)\n")
    (project / "kernel.cu").write_text("__global__ void k(int* x) { *x = 1; }\n")
    build = tmp / "cmake-build"
    shutil.rmtree(build, ignore_errors=True)
    nvcc = find_nvcc()
    command = f"cmake -S {project} -B {build} -G Ninja -DCMAKE_CUDA_COMPILER={nvcc} {printed.strip()}"
    configured = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=600)
    check(configured.returncode == 0, f"cmake configures with {printed!r}: {configured.stdout[-1500:]}\n{configured.stderr[-1500:]}")
    cache = (build / "CMakeCache.txt").read_text() if (build / "CMakeCache.txt").exists() else ""
    cached = re.search(r"^CMAKE_CUDA_ARCHITECTURES:\w+=(.*)$", cache, re.M)
    # The generator turns the list into nvcc's -gencode flags: the printed list reached the compiler.
    commands = subprocess.run(["ninja", "-C", str(build), "-t", "commands"], capture_output=True, text=True,
                              timeout=60).stdout
    return (cached.group(1) if cached else None), commands


@case
def every_format_for_one_machine(tmp):
    env = machine(tmp)
    conda = arch(env, tmp, "--format", "conda").stdout
    values = bash_eval(conda, ["CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_CUDA_ARCH"])
    check(values["CONDA_OVERRIDE_CUDA"] == "13.0", f"the driver's CUDA 13.0: {conda!r}")
    check(CONDA_CUDA.match(values["CONDA_OVERRIDE_CUDA"]) is not None, f"a conda version: {values}")
    # CEP 46: the model of the GPU, letters and digits, without "NVIDIA".
    check(values["CONDA_OVERRIDE_CUDA_ARCH"] == "9.0=H10080GBHBM3", f"__cuda_arch's override: {values}")
    check(CEP46_ARCH.match(values["CONDA_OVERRIDE_CUDA_ARCH"]) is not None, f"CEP 46's form: {values}")

    pixi = tomllib.loads(arch(env, tmp, "--format", "pixi").stdout)
    check(pixi == {"system-requirements": {"cuda": "13.0"}}, f"pixi's table: {pixi}")

    spack = arch(env, tmp, "--format", "spack").stdout
    parsed = SPACK_SPEC.match(spack.rstrip("\n"))
    check(parsed is not None and parsed["archs"] == "90" and parsed["cuda"] == "13.0", f"spack's spec: {spack!r}")

    nix = nix_attrset(arch(env, tmp, "--format", "nix").stdout)
    check(nix == {"cudaSupport": True, "cudaCapabilities": ["9.0"]}, f"nixpkgs config: {nix}")

    torch = bash_eval(arch(env, tmp, "--format", "torch").stdout, ["TORCH_CUDA_ARCH_LIST"])["TORCH_CUDA_ARCH_LIST"]
    check(torch == "9.0+PTX", f"TORCH_CUDA_ARCH_LIST: {torch!r}")
    check(all(TORCH_ENTRY.match(entry) for entry in torch.replace(" ", ";").split(";")), f"torch's grammar: {torch!r}")

    report = json.loads(arch(env, tmp, "--format", "json").stdout)
    check(report["subject"]["archs"] == ["9.0"] and report["subject"]["driver_cuda"] == "13.0", f"json: {report['subject']}")
    check(report["cmake"] == {"CMAKE_CUDA_ARCHITECTURES": "90"}, f"json's cmake: {report['cmake']}")
    check(report["conda"] == values and report["pixi"] == pixi and report["nix"] == nix, f"json agrees: {report}")
    check(report["torch"] == {"TORCH_CUDA_ARCH_LIST": torch}, f"json's torch: {report['torch']}")
    check(report["spack"] == spack.rstrip("\n"), f"json's spack: {report['spack']}")


@case
def mixed_gpus_each_the_way_its_tool_expects(tmp):
    env = machine(tmp, gpus=[(H100, "9.0"), (A100, "8.0"), (H100, "9.0")])
    # conda: the lowest compute capability (CEP 46), with that GPU's model.
    values = bash_eval(arch(env, tmp, "--format", "conda").stdout, ["CONDA_OVERRIDE_CUDA_ARCH"])
    check(values["CONDA_OVERRIDE_CUDA_ARCH"] == "8.0=A100SXM480GB", f"the lowest GPU: {values}")
    # The lists: every architecture once, ascending.
    check(nix_attrset(arch(env, tmp, "--format", "nix").stdout)["cudaCapabilities"] == ["8.0", "9.0"], "nix lists both")
    check(SPACK_SPEC.match(arch(env, tmp, "--format", "spack").stdout.strip())["archs"] == "80,90", "spack lists both")
    torch = bash_eval(arch(env, tmp, "--format", "torch").stdout, ["TORCH_CUDA_ARCH_LIST"])["TORCH_CUDA_ARCH_LIST"]
    check(torch == "8.0;9.0+PTX", f"SASS for each, PTX for the newest: {torch!r}")
    printed = arch(env, tmp, "--format", "cmake").stdout
    check(printed == '-DCMAKE_CUDA_ARCHITECTURES="80;90"\n', f"cmake's list, quoted for the shell: {printed!r}")
    # The variant provider chooses for the newest GPU alone: said on stderr, never in the output.
    variant = arch(env, tmp, "--format", "variant")
    check("nvidia :: sm_arch :: 90_real" in variant.stdout and "80_real" not in variant.stdout, variant.stdout[-300:])
    check("sm_80" in variant.stderr and "newest GPU alone" in variant.stderr, f"the note: {variant.stderr!r}")
    if find_nvcc() is None or shutil.which("cmake") is None or shutil.which("ninja") is None:
        print("skip (cmake part): no nvcc on PATH or in /usr/local/cuda, or no cmake/ninja")
        return
    cached, commands = cmake_accepts(tmp, printed)
    check(cached == "80;90", f"the cache holds the list: {cached!r}")
    check("sm_80" in commands and "sm_90" in commands, f"nvcc compiles for both: {commands[-800:]}")


@case
def a_declared_target_by_arch_and_by_gpu_model(tmp):
    env = machine(tmp)
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.2"\n[targets.a100]\ndriver = "535.104.05"\narch = ["8.0"]\n'
                                      '[targets.inference]\ndriver = "550.54.15"\ngpu = ["H100", "L40S"]\n')
    values = bash_eval(arch(env, project, "--target", "a100", "--format", "conda").stdout,
                       ["CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_CUDA_ARCH"])
    # Driver branch 535 supports CUDA 12.2 (the database's driver branches); a target has no model.
    check(values == {"CONDA_OVERRIDE_CUDA": "12.2", "CONDA_OVERRIDE_CUDA_ARCH": "8.0"}, f"target a100: {values}")
    # GPU models through the database's [[gpu]] rows: L40S is 8.9, H100 9.0.
    nix = nix_attrset(arch(env, project, "--target", "inference", "--format", "nix").stdout)
    check(nix["cudaCapabilities"] == ["8.9", "9.0"], f"gpu names: {nix}")
    pixi = tomllib.loads(arch(env, project, "--target", "inference", "--format", "pixi").stdout)
    check(pixi["system-requirements"]["cuda"] == "12.4", f"branch 550 supports 12.4: {pixi}")
    check(arch(env, project, "--target", "inference", "--format", "cmake").stdout ==
          '-DCMAKE_CUDA_ARCHITECTURES="89;90"\n', "the target's cmake list")
    report = json.loads(arch(env, project, "--target", "inference", "--json").stdout)
    check(report["subject"]["declared"] and report["subject"]["name"] == "inference", f"json: {report['subject']}")
    unknown = arch(env, project, "--target", "h200", expect=None)
    expect_error(unknown, 3, "--target", "h200")
    check("its targets: a100, inference" in unknown.stderr, f"the declared names: {unknown.stderr!r}")
    (project / ".cudaenv").write_text('[targets.x]\ndriver = "550.54.15"\ngpu = ["H1OO"]\n')
    expect_error(arch(env, project, "--target", "x", expect=None), 2, "H1OO", "H100")


@case
def an_unknown_format_names_the_flag_and_the_values(tmp):
    env = machine(tmp)
    proc = arch(env, tmp, "--format", "yaml", expect=None)
    line = expect_error(proc, 2, "--format", "yaml", "conda", "pixi", "spack", "nix", "cmake", "torch", "json")
    check(proc.stdout == "", f"nothing on stdout: {proc.stdout!r}")
    check(line.count("\n") == 0, line)


@case
def no_driver_machine(tmp):
    env = machine(tmp, name="ci-no-driver")
    # conda: an empty override is how conda is told a virtual package is absent.
    values = bash_eval(arch(env, tmp, "--format", "conda").stdout, ["CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_CUDA_ARCH"])
    check(values == {"CONDA_OVERRIDE_CUDA": "", "CONDA_OVERRIDE_CUDA_ARCH": ""}, f"absent: {values}")
    # The build lists need GPUs: not found, pointing at --target.
    for format_name in ("cmake", "nix", "spack", "torch"):
        proc = arch(env, tmp, "--format", format_name, expect=None)
        expect_error(proc, 3, f"--format {format_name}")
        check(proc.stdout == "" and "--target" in proc.stderr, f"{format_name}: {proc.stdout!r} {proc.stderr!r}")
    expect_error(arch(env, tmp, "--format", "pixi", expect=None), 3, "no NVIDIA driver")
    report = json.loads(arch(env, tmp, "--json").stdout)
    check(report["cmake"] is None and report["pixi"] is None and report["subject"]["driver"] is None, f"json: {report}")


@case
def a_hostile_gpu_name_never_reaches_the_output(tmp):
    env = machine(tmp, gpus=[('$(touch pwned)"`id`\\ A100', "8.0")])
    conda = arch(env, tmp, "--format", "conda").stdout
    values = bash_eval(f"cd {tmp}\n" + conda, ["CONDA_OVERRIDE_CUDA_ARCH"])
    check(not (tmp / "pwned").exists(), f"eval ran nothing: {conda!r}")
    check(values["CONDA_OVERRIDE_CUDA_ARCH"] == "8.0=touchpwnedidA100", f"letters and digits only: {values}")
    check(CEP46_ARCH.match(values["CONDA_OVERRIDE_CUDA_ARCH"]) is not None, values)


finish()
