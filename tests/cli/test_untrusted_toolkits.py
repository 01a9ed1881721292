"""Trust all the way down: a store that passes its own check can still hold a toolkit whose prefix,
bin/ or a program in it another user can write. Every path that runs the store's programs (the
shims, exec, which, env, the prompt hook, verify) refuses such a toolkit with one line naming the
path, its owner or mode and the fix, in the user's own root and in a read-only system store
(CUDAENV_SYSTEM_ROOTS), and the nvcc planted there never runs."""

import os
import subprocess
from pathlib import Path

from harness import BINARY, case, check, clean_env, expect_error, finish, install_synthetic_toolkits

AS_ROOT = os.geteuid() == 0
OTHER_UID = 65534


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def planted_toolkit(tmp, system=False):
    """12.4.1 installed (in the user's root, or in a system store with an empty user root), the
    shims made, a project selecting it, and its nvcc replaced by one that leaves a marker.
    Returns (env, project, prefix, marker)."""
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"}, PATH="/usr/bin:/bin")
    if system:
        env = dict(env, CUDAENV_ROOT=str(tmp / "user"), CUDAENV_SYSTEM_ROOTS=str(tmp / "root"))
    cudaenv(["rehash"], env, tmp)
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.4"\n')
    marker = tmp / "planted-nvcc-ran"
    prefix = tmp / "root" / "toolkits" / "12.4.1"
    nvcc = prefix / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\ntouch {marker}\necho planted\n")
    nvcc.chmod(0o755)
    check(cudaenv(["which", "nvcc"], env, project).stdout.strip() == str(nvcc),
          "before the change the toolkit is the one selected")
    return env, project, prefix, marker


def bash_hook(env, project):
    """An interactive bash with the hook: enter the project, try nvcc, show CUDA_HOME."""
    rc = Path(env["HOME"]) / "rc"
    rc.write_text(cudaenv(["init", "bash"], env, project).stdout)
    script = f"cd {project}\nnvcc --version\necho \"CUDA_HOME=[$CUDA_HOME]\"\nexit\n"
    return subprocess.run(["bash", "--noprofile", "--rcfile", str(rc), "-i"], input=script,
                          env=dict(env, TERM="dumb"), cwd=env["HOME"], capture_output=True, text=True,
                          timeout=60)


def every_entry_point_refuses(env, project, marker, needle, fix):
    for args in (["exec", "--", "nvcc", "--version"], ["env", "--shell", "bash"], ["which", "nvcc"],
                 ["verify", "12.4"]):
        proc = cudaenv(args, env, project)
        expect_error(proc, 1, needle)
        check(fix in proc.stderr, f"{args[0]}: the hint names the fix {fix!r}: {proc.stderr!r}")
    shims = Path(env["CUDAENV_ROOT"]) / "shims"
    if (shims / "nvcc").exists():
        shim = subprocess.run([str(shims / "nvcc"), "--version"], env=env, cwd=project, capture_output=True,
                              text=True, timeout=60)
        check(shim.returncode == 1 and needle in shim.stderr, f"the shim refuses: {shim.stderr!r}")
    hook = bash_hook(env, project)
    refusals = [line for line in hook.stderr.splitlines() if needle in line]
    check(len(refusals) == 1, f"the hook says it in one line: {hook.stderr!r}")
    check("CUDA_HOME=[]" in hook.stdout, f"the hook leaves the environment without a toolkit: {hook.stdout!r}")
    check(not marker.exists(), "the planted nvcc never ran")


def each_level(tmp, system):
    for level, mode in (("prefix", 0o775), ("bin", 0o775), ("nvcc", 0o775), ("nvcc", 0o757)):
        case_dir = tmp / f"{level}-{mode:o}"
        case_dir.mkdir()
        env, project, prefix, marker = planted_toolkit(case_dir, system)
        path = {"prefix": prefix, "bin": prefix / "bin", "nvcc": prefix / "bin" / "nvcc"}[level]
        path.chmod(mode)
        what = "toolkit program" if level == "nvcc" else "toolkit directory"
        writer = "every user" if mode & 0o002 else "its group"
        every_entry_point_refuses(env, project, marker, f"{what} {path} is writable by {writer} (mode 0{mode:o})",
                                  f"chmod go-w {path}")
        path.chmod(0o755)
        proc = cudaenv(["exec", "--", "nvcc", "--version"], env, project)
        check(proc.returncode == 0 and marker.exists(), f"{level} fixed: the toolkit runs again: {proc.stderr!r}")


@case
def a_toolkit_others_can_write_in_our_root_never_runs(tmp):
    each_level(tmp, system=False)


@case
def a_toolkit_others_can_write_in_a_system_store_never_runs(tmp):
    each_level(tmp, system=True)


@case
def a_program_in_bin_owned_by_another_user_never_runs(tmp):
    if not AS_ROOT:
        print("skip: a program owned by another user needs root to chown")
        return
    env, project, prefix, marker = planted_toolkit(tmp)
    ptxas = prefix / "bin" / "ptxas"  # not the tool asked for: nvcc runs it from bin/
    ptxas.write_text("#!/bin/sh\n")
    ptxas.chmod(0o755)
    os.chown(ptxas, OTHER_UID, OTHER_UID)
    every_entry_point_refuses(env, project, marker, f"toolkit program {ptxas} is owned by uid {OTHER_UID} (you are 0)",
                              f"chown 0 {ptxas}")


@case
def a_cudnn_library_directory_others_can_write_is_refused(tmp):
    from synthetic_mirror import cudnn_release
    from harness import mirror_server, run
    env, project, prefix, marker = planted_toolkit(tmp)
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], env, check_exit=0)
    (project / ".cudaenv").write_text('cuda = "12.4"\ncudnn = "9.1"\n')
    libraries = [p for p in (tmp / "root" / "cudnn").glob("*/lib*") if p.is_dir() and not p.is_symlink()]
    check(len(libraries) == 1, f"one cuDNN library directory: {libraries}")
    for lib in libraries:
        lib.chmod(0o777)
        expect_error(cudaenv(["exec", "--", "nvcc", "--version"], env, project), 1,
                     f"cuDNN library directory {lib} is writable by every user (mode 0777)")
    check(not marker.exists(), "nothing ran with a library directory others can write")


finish()
