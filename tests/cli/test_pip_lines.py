"""Framework pins lead somewhere: `cudaenv use --torch 2.9` records the pin under [frameworks],
and `use`, `resolve` (with no flags, inside a project) and `pip-args` turn the .cudaenv's pins
into the exact `pip install` / `uv pip install` line; a torch pin without a build for the pinned
CUDA is an error naming both and the nearest choices that fit."""

import json
import subprocess

from harness import BINARY, case, check, clean_env, expect_error, finish

CU130 = "https://download.pytorch.org/whl/cu130"


def project(tmp, text):
    """A project directory holding `text` as its .cudaenv, on a machine with no driver or GPU
    (an empty root), so that the answer depends on the pins alone."""
    (tmp / "machine").mkdir()
    directory = tmp / "repo"
    directory.mkdir()
    if text is not None:
        (directory / ".cudaenv").write_text(text)
    env = clean_env(tmp, CUDAENV_SYSROOT=tmp / "machine", CUDAENV_ROOT=tmp / "root")
    return directory, env


def run_in(directory, args, env):
    return subprocess.run([BINARY, *args], cwd=directory, env=env, capture_output=True, text=True, timeout=60)


@case
def use_torch_pins_the_framework_and_prints_the_pip_lines(tmp):
    directory, env = project(tmp, 'cuda = "13.0"  # the cluster\'s nodes\n')
    proc = run_in(directory, ["use", "--torch", "2.9"], env)
    check(proc.returncode == 0, f"use --torch 2.9 without a CUDA spec: {proc.returncode} {proc.stderr}")
    text = (directory / ".cudaenv").read_text()
    check('cuda = "13.0"  # the cluster\'s nodes' in text and '[frameworks]\ntorch = "2.9"' in text,
          f"the pin lands under [frameworks], the CUDA pin and its comment kept:\n{text}")
    check(f'pip install "torch==2.9.*" --index-url {CU130}' in proc.stdout, f"pip line:\n{proc.stdout}")
    check(f'uv pip install "torch==2.9.*" --index-url {CU130}' in proc.stdout, f"uv line:\n{proc.stdout}")


@case
def resolve_inside_a_project_reads_its_pins(tmp):
    directory, env = project(tmp, 'cuda = "13.0"\n[frameworks]\ntorch = "2.9"\n')
    proc = run_in(directory, ["resolve"], env)
    check(proc.returncode == 0, f"resolve: {proc.returncode} {proc.stderr}")
    check(f"pins from {directory}/.cudaenv" in proc.stdout, f"names the file:\n{proc.stdout}")
    check(f'pip install "torch==2.9.*" --index-url {CU130}' in proc.stdout
          and f'uv pip install "torch==2.9.*" --index-url {CU130}' in proc.stdout, f"both lines:\n{proc.stdout}")
    data = json.loads(run_in(directory, ["resolve", "--json"], env).stdout)
    torch = (data["frameworks"] or [{}])[0]
    check((data["cuda"] or {}).get("version", "").startswith("13.0."), f"the pinned CUDA: {data['cuda']}")
    check(torch.get("pip_args") == ["torch==2.9.*", "--index-url", CU130], f"pip_args: {torch}")
    check(torch.get("uv_install") == f'uv pip install "torch==2.9.*" --index-url {CU130}', f"uv_install: {torch}")


@case
def pip_args_prints_one_argument_a_line_for_scripts(tmp):
    directory, env = project(tmp, 'cuda = "13.0"\n[frameworks]\ntorch = "2.9.1"\n')
    proc = run_in(directory, ["pip-args"], env)
    check(proc.returncode == 0 and proc.stdout == f"torch==2.9.1\n--index-url\n{CU130}\n",
          f"pip-args: {proc.returncode} {proc.stdout!r} {proc.stderr}")
    # The documented use in a real shell: each line becomes one argument.
    shell = subprocess.run(["bash", "-c", f'set -- $("{BINARY}" pip-args); printf "[%s]" "$@"'], cwd=directory,
                           env=env, capture_output=True, text=True, timeout=60)
    check(shell.stdout == f"[torch==2.9.1][--index-url][{CU130}]", f"bash splits it into the arguments: {shell.stdout!r}")

    # PyPI's default build (cu128 for torch 2.9) needs no index.
    (directory / ".cudaenv").write_text('cuda = "12.8"\n[frameworks]\ntorch = "2.9"\n')
    proc = run_in(directory, ["pip-args"], env)
    check(proc.stdout == "torch==2.9.*\n", f"PyPI's default build: {proc.stdout!r} {proc.stderr}")


@case
def a_torch_pin_without_a_build_for_the_pinned_cuda_names_both_and_the_nearest(tmp):
    directory, env = project(tmp, 'cuda = "12.4"\n[frameworks]\ntorch = "2.9"\n')
    for args in (["resolve"], ["pip-args"]):
        proc = run_in(directory, args, env)
        line = expect_error(proc, 4, "torch 2.9", "CUDA 12.4", f"{directory}/.cudaenv")
        check("12.6, 12.8, 13.0" in line, f"{args}: lists the CUDA versions torch 2.9 is built for: {line}")
        check('cuda = "12.6"' in proc.stderr and 'torch = "2.6"' in proc.stderr,
              f"{args}: the nearest CUDA for torch 2.9, and the newest torch built for CUDA 12.4: {proc.stderr}")


@case
def pip_args_without_a_pin_says_how_to_pin_one(tmp):
    directory, env = project(tmp, 'cuda = "13.0"\n')
    proc = run_in(directory, ["pip-args"], env)
    expect_error(proc, 3, "no framework pinned")
    check("cudaenv use --torch" in proc.stderr, f"hint: {proc.stderr}")


finish()
