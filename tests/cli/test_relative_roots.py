"""A relative CUDAENV_ROOT (or a relative entry of CUDAENV_SYSTEM_ROOTS) would make whatever
directory cudaenv runs in the trusted store: from inside a cloned repository that ships a store,
its planted nvcc would run through exec, the shims and the prompt hook. Every program refuses such
a value with one line (exit 2), runs nothing and writes nothing into the working directory."""

import shutil
import subprocess
from pathlib import Path

from harness import BINARY, case, check, expect_error, finish, install_synthetic_toolkits


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def repository_with_a_store(tmp):
    """A real store (12.4.1, shims made) and a repository whose `store/` is a copy of it with a
    planted nvcc, and whose .cudaenv selects that toolkit. Returns (env, repo, marker)."""
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"}, PATH="/usr/bin:/bin")
    cudaenv(["rehash"], env, tmp)
    repo = tmp / "repo"
    repo.mkdir()
    (repo / ".cudaenv").write_text('cuda = "12.4"\n')
    shutil.copytree(tmp / "root" / "toolkits", repo / "store" / "toolkits", symlinks=True)
    marker = tmp / "planted-nvcc-ran"
    nvcc = repo / "store" / "toolkits" / "12.4.1" / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\ntouch {marker}\necho planted\n")
    nvcc.chmod(0o755)
    return env, repo, marker


def tree(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def bash_hook(env, cwd):
    rc = Path(env["HOME"]) / "rc"
    rc.write_text(cudaenv(["init", "bash"], dict(env, CUDAENV_ROOT=str(Path(env["HOME"]) / "root")), cwd).stdout)
    script = "nvcc --version\necho \"CUDA_HOME=[$CUDA_HOME]\"\nexit\n"
    return subprocess.run(["bash", "--noprofile", "--rcfile", str(rc), "-i"], input=script,
                          env=dict(env, TERM="dumb"), cwd=cwd, capture_output=True, text=True, timeout=60)


@case
def a_relative_data_root_is_refused_inside_a_repository(tmp):
    env, repo, marker = repository_with_a_store(tmp)
    shim = tmp / "root" / "shims" / "nvcc"
    before = tree(repo)
    for value in ("store", "./store", "store/../store"):
        relative = dict(env, CUDAENV_ROOT=value)
        for args in (["exec", "--", "nvcc", "--version"], ["which", "nvcc"], ["env", "--shell", "bash"],
                     ["current"], ["hook-env", "--shell", "bash"], ["list"], ["rehash"], ["verify", "12.4"],
                     ["cache", "clean"]):
            proc = cudaenv(args, relative, repo)
            expect_error(proc, 2, f"CUDAENV_ROOT names a relative path ({value})")
            check("hint: set CUDAENV_ROOT to an absolute path" in proc.stderr, f"{args[0]}: the fix: {proc.stderr!r}")
        proc = subprocess.run([str(shim), "--version"], env=relative, cwd=repo, capture_output=True, text=True,
                              timeout=60)
        check(proc.returncode == 2 and "CUDAENV_ROOT names a relative path" in proc.stderr,
              f"the shim refuses it: {proc.returncode} {proc.stderr!r}")
        hook = bash_hook(relative, repo)
        refusals = [line for line in hook.stderr.splitlines() if "CUDAENV_ROOT names a relative path" in line]
        check(len(refusals) == 1, f"the hook says it once: {hook.stderr!r}")
        check("CUDA_HOME=[]" in hook.stdout, f"nothing is activated: {hook.stdout!r}")
    check(not marker.exists(), "the repository's planted nvcc never ran")
    check(tree(repo) == before, f"nothing was written into the repository: {sorted(set(tree(repo)) - set(before))}")
    # The same store named absolutely is a store like any other (it is ours and not writable by others).
    proc = cudaenv(["which", "nvcc"], dict(env, CUDAENV_ROOT=str(repo / "store")), repo)
    check(proc.returncode == 0 and proc.stdout.strip().endswith("store/toolkits/12.4.1/bin/nvcc"),
          f"an absolute root is accepted: {proc.stderr!r}")


@case
def a_relative_system_store_is_refused(tmp):
    env, repo, marker = repository_with_a_store(tmp)
    for listed in ("store", f"{tmp / 'elsewhere'}:store"):
        proc = cudaenv(["list"], dict(env, CUDAENV_SYSTEM_ROOTS=listed), repo)
        expect_error(proc, 2, "CUDAENV_SYSTEM_ROOTS names a relative path (store)")
        proc = cudaenv(["exec", "--", "nvcc", "--version"], dict(env, CUDAENV_SYSTEM_ROOTS=listed), repo)
        expect_error(proc, 2, "CUDAENV_SYSTEM_ROOTS names a relative path (store)")
    # In the system config too: the stores it names are dropped, and `list` says why.
    config = tmp / "system.toml"
    config.write_text('system_roots = ["store"]\n')
    proc = cudaenv(["list"], dict(env, CUDAENV_SYSTEM_CONFIG=str(config)), repo)
    check(proc.returncode != 0 and "system_roots entries must be absolute paths" in proc.stderr,
          f"list names the relative entry of the system config: {proc.stdout!r} {proc.stderr!r}")
    check(not marker.exists(), "the repository's planted nvcc never ran")


finish()
