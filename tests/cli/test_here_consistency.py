"""One answer to "what applies here": every command that names a toolkit for the current directory
(list, current, doctor, verify, env, which, exec, the prompt hook, scan, why) names the same
toolkit, the same cuDNN and the same reason, in a matrix of situations: fixture machines with and
without a system toolkit; a project pinning an installed, a missing and a runtime-only toolkit; a
toolkit only in a system store; the hook active, missing (plain environment) and stale (another
project's activation). A failure prints the whole situation × command table, with the fields read
from each command."""

import atexit
import json
import re
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

from framework_wheels import framework_index
from harness import BINARY, case, check, clean_env, finish, fixture_machine, mirror_server, run, run_in
from here_matrix import COMMANDS, NONE, NOT_INSTALLED, Situation, disagreements, table
from synthetic_mirror import cudnn_release, toolkit_release
from synthetic_wheels import cuda12_release

WORLD = Path(tempfile.mkdtemp(prefix="cudaenv-here-"))
atexit.register(shutil.rmtree, WORLD, ignore_errors=True)
ROOT = WORLD / "root"            # the user's own store
SYSTEM = WORLD / "opt" / "cudaenv"  # a system store (CUDAENV_SYSTEM_ROOTS)
WITH_TOOLKIT = "h200-apt-toolkit"   # /usr/local/cuda -> cuda-13.0 from NVIDIA's apt packages
WITHOUT_TOOLKIT = "bootstrap-fresh-2204"  # no toolkit anywhere


def build_world():
    """Installs once, for every case: 12.1.1 and 12.4.1 (with cuDNN 9.1) from a synthetic mirror
    and a runtime-only 12.8.1 from a package index into the user's store; 12.6.3 into a system
    store only."""
    mirror = WORLD / "mirror"
    toolkit_release(mirror, "12.1.1", "12.1.105")
    toolkit_release(mirror, "12.4.1", "12.4.131")
    toolkit_release(mirror, "12.6.3", "12.6.85")
    cudnn_release(mirror, "9.1.0", "9.1.0.70")
    env = clean_env(WORLD / "home", CUDAENV_ROOT=ROOT)
    with mirror_server(mirror) as (url, _):
        run(["install", "12.1.1", "--mirror", url], env, check_exit=0)
        run(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], env, check_exit=0)
        run(["install", "12.6.3", "--mirror", url], dict(env, CUDAENV_ROOT=str(SYSTEM)), check_exit=0)
    wheels = WORLD / "wheels"
    cuda12_release(wheels)
    with framework_index(wheels) as (base, _):
        run(["install", "12.8.1", "--source", "pypi", "--runtime-only", "--index-url", f"{base}/simple"], env,
            check_exit=0)


def real_libraries(prefix):
    """The synthetic archives ship placeholder text as libcudart and libcudnn; `why` follows the
    loader, which takes only a real ELF: each becomes a small real shared library of that soname,
    named with its version behind the soname link, as NVIDIA ships them (libcudart.so.12 ->
    libcudart.so.12.4.1), so that copies of two releases differ."""
    version = prefix.name.split("-cuda")[0]
    for library in sorted(prefix.glob("lib/lib*.so.*")):
        if library.is_symlink() or library.read_bytes()[:4] == b"\x7fELF":
            continue
        mode = library.parent.stat().st_mode
        library.parent.chmod(0o755)
        source = WORLD / "empty.c"
        source.write_text("int cudaenv_test_library(void) { return 0; }\n")
        library.unlink()
        versioned = library.with_name(library.name.split(".so.")[0] + ".so." + version)
        subprocess.run(["cc", "-shared", "-fPIC", str(source), f"-Wl,-soname,{library.name}", "-o", str(versioned)],
                       check=True)
        library.symlink_to(versioned.name)
        library.parent.chmod(mode)


build_world()
for store in (ROOT, SYSTEM):
    for installed in [*store.glob("toolkits/*"), *store.glob("cudnn/*")]:
        if installed.is_dir():
            real_libraries(installed)
STORE_124 = str(ROOT / "toolkits" / "12.4.1")
STORE_121 = str(ROOT / "toolkits" / "12.1.1")
CUDNN_91 = str(ROOT / "cudnn" / "9.1.0-cuda12")


def machine(tmp, name):
    return fixture_machine(name, tmp / "machine")


def environment(tmp, sysroot, path_dirs=(), **extra):
    """A user's environment on the fixture machine: no CUDA variable, and a PATH with no nvcc
    (nor python3: scan would walk this host's site-packages) unless `path_dirs` adds one."""
    empty_bin = tmp / "bin"
    empty_bin.mkdir(exist_ok=True)
    path = ":".join([*map(str, path_dirs), str(empty_bin)])
    return clean_env(tmp / "home", PATH=path, CUDAENV_ROOT=ROOT, CUDAENV_SYSROOT=sysroot, **extra)


def project(tmp, name, text):
    directory = tmp / name
    (directory / "src").mkdir(parents=True)
    (directory / ".cudaenv").write_text(text)
    return directory / "src", directory / ".cudaenv"


def activated_environment(env, cwd):
    """The environment a bash prompt hook leaves after running in `cwd`: hook-env evaluated."""
    script = f'eval "$("{BINARY}" hook-env --shell bash)"; /usr/bin/env -0'
    proc = subprocess.run(["/bin/bash", "--norc", "--noprofile", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0, f"hook-env evaluated in {cwd}: {proc.stderr}")
    pairs = [item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item]
    return {name: value for name, value in pairs if name not in ("PWD", "OLDPWD", "SHLVL", "_")}


def ask_everyone(situation, toolkit=None, cudnn=NONE, reason=None):
    """Runs every command in `situation` and checks each names the expected toolkit, cuDNN and
    reason (None: whatever most commands say; the point is that they agree). No cuDNN is pinned
    unless `cudnn` names one."""
    answers = {command: ask(situation) for command, ask in COMMANDS.items()}
    expected = {"toolkit": toolkit, "cudnn": cudnn, "reason": reason}
    wanted_toolkit, wanted_cudnn, wanted_reason, bad = disagreements(situation, answers, expected)
    summary = f"expected toolkit={wanted_toolkit} cudnn={wanted_cudnn} reason={wanted_reason}"
    report = table(situation, answers, summary, bad)
    print(report)
    check(not bad, f"{len(bad)} command(s) disagree on what applies here:\n{report}")


# --- 1. no project -------------------------------------------------------------------------

@case
def no_project_on_a_machine_without_a_toolkit(tmp):
    sysroot = machine(tmp, WITHOUT_TOOLKIT)
    work = tmp / "work"
    work.mkdir()
    ask_everyone(Situation("no project, no system toolkit", work, environment(tmp, sysroot)), toolkit=NONE)


@case
def no_project_with_a_system_nvcc_on_path(tmp):
    """The machine's toolkit, with its bin on PATH: also present at the same path on this host,
    so the commands that run programs (which, exec, the hook) can reach it as the probe does."""
    sysroot = machine(tmp, WITH_TOOLKIT)
    system_toolkit = tmp / "system" / "cuda-13.0"
    shutil.copytree(sysroot / "usr" / "local" / "cuda-13.0", system_toolkit, symlinks=True)
    shutil.copytree(system_toolkit, Path(str(sysroot) + str(system_toolkit)), symlinks=True)
    work = tmp / "work"
    work.mkdir()
    env = environment(tmp, sysroot, path_dirs=[system_toolkit / "bin"])
    ask_everyone(Situation("no project, system nvcc on PATH", work, env, library="libcudart.so.13"),
                 toolkit=str(system_toolkit))


@case
def no_project_with_only_usr_local_cuda(tmp):
    """/usr/local/cuda exists but nothing puts it on PATH: whatever the answer, one answer."""
    sysroot = machine(tmp, WITH_TOOLKIT)
    work = tmp / "work"
    work.mkdir()
    ask_everyone(Situation("no project, /usr/local/cuda only", work, environment(tmp, sysroot),
                           library="libcudart.so.13"))


# --- 2.-4. a project's pin, hook missing ---------------------------------------------------------

@case
def project_pinning_an_installed_toolkit_and_cudnn(tmp):
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, pin = project(tmp, "repo", 'cuda = "12.4"\ncudnn = "9.1"\n')
    ask_everyone(Situation("pin installed 12.4 + cuDNN 9.1 (no hook)", cwd, environment(tmp, sysroot), pin),
                 toolkit=STORE_124, cudnn=CUDNN_91, reason=f"file {pin}")


@case
def project_pinning_a_missing_toolkit(tmp):
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, pin = project(tmp, "repo", 'cuda = "11.8"\n')
    ask_everyone(Situation("pin missing 11.8 (no hook)", cwd, environment(tmp, sysroot), pin),
                 toolkit=NOT_INSTALLED, reason=f"file {pin}")


@case
def project_pinning_a_release_only_the_system_has(tmp):
    """13.0 is the machine's /usr/local/cuda-13.0, not in cudaenv's store: one answer, not two."""
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, pin = project(tmp, "repo", 'cuda = "13.0"\n')
    ask_everyone(Situation("pin 13.0 only the system has (no hook)", cwd, environment(tmp, sysroot), pin,
                           library="libcudart.so.13"), reason=f"file {pin}")


@case
def project_pinning_a_runtime_only_toolkit(tmp):
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, pin = project(tmp, "repo", 'cuda = "12.8.1"\n')
    ask_everyone(Situation("pin runtime-only 12.8.1 (no hook)", cwd, environment(tmp, sysroot), pin),
                 toolkit=str(ROOT / "toolkits" / "12.8.1"), reason=f"file {pin}")


@case
def why_loads_the_projects_copy_without_the_hook(tmp):
    """Hook or no hook, a process started in the project loads the project's copies; this shell,
    which never ran the hook, is named in a note."""
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, _ = project(tmp, "repo", 'cuda = "12.4"\ncudnn = "9.1"\n')
    env = environment(tmp, sysroot)
    for library, prefix in (("libcudart.so.12", STORE_124), ("libcudnn.so.9", CUDNN_91)):
        proc = run_in(["why", library, "--json"], env, cwd, expect=0)
        report = json.loads(proc.stdout)
        check(report["loads"] and report["loads"]["path"].startswith(prefix + "/"),
              f"why {library} loads the project's copy: {report['loads']}")
        check(any("this shell does not carry what applies here" in note for note in report["notes"]),
              f"why {library} names the shell that lacks the hook: {report['notes']}")


# --- 5. a system store ---------------------------------------------------------------------------

@case
def project_pinning_a_toolkit_only_a_system_store_holds(tmp):
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, pin = project(tmp, "repo", 'cuda = "12.6"\n')
    env = environment(tmp, sysroot, CUDAENV_SYSTEM_ROOTS=SYSTEM)
    ask_everyone(Situation("pin 12.6 in the system store only (no hook)", cwd, env, pin),
                 toolkit=str(SYSTEM / "toolkits" / "12.6.3"), reason=f"file {pin}")


# --- 6. the hook active and stale ----------------------------------------------------------------

@case
def hook_active_in_the_project(tmp):
    sysroot = machine(tmp, WITH_TOOLKIT)
    cwd, pin = project(tmp, "repo", 'cuda = "12.4"\ncudnn = "9.1"\n')
    env = activated_environment(environment(tmp, sysroot), cwd)
    check(env.get("CUDA_HOME") == STORE_124, f"the hook activated 12.4.1: {env.get('CUDA_HOME')}")
    ask_everyone(Situation("pin 12.4 + cuDNN 9.1, hook active", cwd, env, pin),
                 toolkit=STORE_124, cudnn=CUDNN_91, reason=f"file {pin}")


@case
def hook_stale_from_another_project(tmp):
    """Activated in a project pinning 12.1, then in this project (12.4 + cuDNN 9.1) before any
    prompt ran the hook: this project's pin applies, not the other one's leftovers."""
    sysroot = machine(tmp, WITH_TOOLKIT)
    other, _ = project(tmp, "other", 'cuda = "12.1"\n')
    cwd, pin = project(tmp, "repo", 'cuda = "12.4"\ncudnn = "9.1"\n')
    env = activated_environment(environment(tmp, sysroot), other)
    check(env.get("CUDA_HOME") == STORE_121, f"the hook activated 12.1.1 there: {env.get('CUDA_HOME')}")
    ask_everyone(Situation("pin 12.4 + cuDNN 9.1, hook stale from a 12.1 project", cwd, env, pin),
                 toolkit=STORE_124, cudnn=CUDNN_91, reason=f"file {pin}")


@case
def hook_stale_after_leaving_a_project(tmp):
    """Activated in a project pinning 12.1, then out of every project: the system's answer (none
    on this PATH), not the project's leftovers."""
    sysroot = machine(tmp, WITHOUT_TOOLKIT)
    other, _ = project(tmp, "other", 'cuda = "12.1"\n')
    work = tmp / "work"
    work.mkdir()
    env = activated_environment(environment(tmp, sysroot), other)
    ask_everyone(Situation("no project, hook stale from a 12.1 project", work, env), toolkit=NONE)


# --- 7. the resolver request: resolve, lock, export and pip-args read one policy -------------------

TARGET = '[targets.h100]\ndriver = "560.35.03"\narch = ["9.0"]\n'


def request_answers(tmp, cwd, env):
    """What resolve, export and lock make of the project's pins: (exit, answer) each, the answer
    being "CUDA x + cuDNN y" or the error's first line. export runs before lock: with a lock it
    reads the lock instead."""
    def error_of(proc):
        lines = [line for line in proc.stderr.splitlines() if line.startswith("cudaenv: error:")]
        return lines[0] if lines else proc.stderr.strip()

    answers = {}
    proc = run_in(["resolve", "--no-detect", "--json"], env, cwd)
    if proc.returncode == 0:
        data = json.loads(proc.stdout)
        answers["resolve"] = (0, f"CUDA {data['cuda']['version']} + cuDNN {(data['cudnn'] or {}).get('version')}")
    else:
        answers["resolve"] = (proc.returncode, error_of(proc))
    proc = run_in(["export", "dockerfile"], env, cwd)
    if proc.returncode == 0:
        chosen = re.search(r"cudaenv install '([0-9.]+)'(?: --cudnn '([0-9.]+)')?", proc.stdout)
        answers["export"] = (0, f"CUDA {chosen.group(1)} + cuDNN {chosen.group(2)}" if chosen else proc.stdout[-300:])
    else:
        answers["export"] = (proc.returncode, error_of(proc))
    with mirror_server(WORLD / "mirror") as (url, _):
        proc = run_in(["lock", "--mirror", url], env, cwd)
    if proc.returncode == 0:
        lock = tomllib.loads((cwd / ".cudaenv.lock").read_text())
        answers["lock"] = (0, f"CUDA {lock['toolkit']['version']} + cuDNN {lock.get('cudnn', {}).get('version')}")
    else:
        answers["lock"] = (proc.returncode, error_of(proc))
    return answers


@case
def one_request_policy_for_an_nvcc_version_pin(tmp):
    """cuda = nvcc's version (12.4.131) names the release that ships it, for every command that
    resolves the project's pins."""
    sysroot = machine(tmp, WITHOUT_TOOLKIT)
    cwd = tmp / "repo"
    cwd.mkdir()
    # cuDNN exact: a lock takes what the mirror serves (9.1.0), resolve the database's newest 9.1.x.
    (cwd / ".cudaenv").write_text('cuda = "12.4.131"\ncudnn = "9.1.0"\n' + TARGET)
    answers = request_answers(tmp, cwd, environment(tmp, sysroot))
    check(all(answer == (0, "CUDA 12.4.1 + cuDNN 9.1.0") for answer in answers.values()),
          f"every command resolves CUDA 12.4.1 + cuDNN 9.1.0: {answers}")


@case
def one_request_policy_for_a_torch_pin_with_no_build_for_the_cuda(tmp):
    """torch 2.8 has no build for CUDA 12.1: resolve, lock, export and pip-args refuse it alike,
    naming the file."""
    sysroot = machine(tmp, WITHOUT_TOOLKIT)
    cwd = tmp / "repo"
    cwd.mkdir()
    pin = cwd / ".cudaenv"
    pin.write_text('cuda = "12.1"\n[frameworks]\ntorch = "2.8"\n' + TARGET)
    env = environment(tmp, sysroot)
    answers = request_answers(tmp, cwd, env)
    proc = run_in(["pip-args"], env, cwd)
    answers["pip-args"] = (proc.returncode, next((line for line in proc.stderr.splitlines()
                                                  if line.startswith("cudaenv: error:")), proc.stderr))
    wanted = f"cudaenv: error: {pin}: torch 2.8 has no build for CUDA 12.1"
    check(len(set(answers.values())) == 1 and all(text.startswith(wanted) for _, text in answers.values()),
          f"every command refuses the pair the same way: {answers}")
    check(not (cwd / ".cudaenv.lock").exists(), "no lock written for a refused request")


finish()
