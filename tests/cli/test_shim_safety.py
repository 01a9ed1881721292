"""A shim never runs itself, however PATH spells the shims directory (`//`, a symlinked directory,
a relative entry, a hard link to the shim program): it runs the real program next on PATH or fails
with a clear error, and a wrapper that leads back to the shim is stopped by CUDAENV_SHIM_DEPTH
(exit 3). Concurrent rehashes, installs and uninstalls all succeed and lose no shim."""

import os
import shutil
import subprocess
import threading

from harness import BINARY, case, check, finish, install_synthetic_toolkits, mirror_server

DEADLINE = 20  # seconds: a loop of execs would never end


def run_tool(program, env, cwd, *args):
    try:
        return subprocess.run([str(program), *args], env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        return None


def system_nvcc(tmp):
    system = tmp / "system-bin"
    system.mkdir()
    (system / "nvcc").write_text("#!/bin/sh\necho system nvcc\n")
    (system / "nvcc").chmod(0o755)
    return system


def spellings(tmp, shims):
    """{description: (PATH entry for the shims, cwd it is relative to)}."""
    (tmp / "alias").symlink_to(shims)
    # A hard link needs the same file system: link a copy of the shim program, and shim through it.
    own = tmp / "own-shim"
    own.mkdir()
    shutil.copy(os.path.join(os.path.dirname(BINARY), "cudaenv-shim"), own / "cudaenv-shim")
    hard = tmp / "hard"
    hard.mkdir()
    os.link(own / "cudaenv-shim", hard / "nvcc")
    return {
        "doubled slashes": (str(shims).replace("/", "//") + "//", tmp),
        "a symlinked directory": (str(tmp / "alias"), tmp),
        "a relative entry": (os.path.relpath(shims, tmp), tmp),
        "a dot-dot spelling": (f"{shims}/../shims/.", tmp),
        "a hard link to the shim program": (str(hard), tmp),
    }


@case
def no_spelling_of_path_makes_a_shim_run_itself(tmp):
    env = install_synthetic_toolkits(tmp, PATH="/usr/bin:/bin")
    shims = tmp / "root" / "shims"
    system = system_nvcc(tmp)
    for what, (entry, cwd) in spellings(tmp, shims).items():
        program = entry if os.path.isabs(entry) else os.path.join(cwd, entry)
        program = os.path.join(program, "nvcc")
        # With the system's nvcc further down PATH, that is what runs outside projects.
        proc = run_tool(program, dict(env, PATH=f"{entry}:{system}:/usr/bin:/bin"), cwd)
        check(proc is not None and proc.returncode == 0 and proc.stdout == "system nvcc\n",
              f"{what}: runs the next nvcc on PATH: {proc and (proc.returncode, proc.stdout, proc.stderr[-300:])}")
        # With none, a clear error rather than a loop.
        proc = run_tool(program, dict(env, PATH=f"{entry}:/usr/bin:/bin"), cwd, "--version")
        check(proc is not None and proc.returncode == 3 and "there is none on PATH" in proc.stderr,
              f"{what}: no other nvcc is a clear error: {proc and (proc.returncode, proc.stderr[-300:])}")


@case
def a_wrapper_leading_back_to_the_shim_is_stopped(tmp):
    env = install_synthetic_toolkits(tmp, PATH="/usr/bin:/bin")
    shims = tmp / "root" / "shims"
    wrapper = tmp / "wrapper-bin"
    wrapper.mkdir()
    # A site wrapper that calls "nvcc" again by name: PATH leads it straight back to the shim.
    (wrapper / "nvcc").write_text('#!/bin/sh\nexec nvcc "$@"\n')
    (wrapper / "nvcc").chmod(0o755)
    proc = run_tool(shims / "nvcc", dict(env, PATH=f"{shims}:{wrapper}:/usr/bin:/bin"), tmp, "--version")
    check(proc is not None, "the shim and the wrapper loop for ever")
    if proc is not None:
        lines = [line for line in proc.stderr.splitlines() if line.startswith("cudaenv: nvcc:")]
        check(proc.returncode == 3 and len(lines) == 1 and "CUDAENV_SHIM_DEPTH" in lines[0],
              f"a clear error, exit 3: {proc.returncode} {proc.stderr[-500:]!r}")
    # A project's own nvcc still runs, and a garbled depth counts as none.
    (tmp / "p").mkdir()
    (tmp / "p" / ".cudaenv").write_text("12.4\n")
    proc = run_tool(shims / "nvcc", dict(env, CUDAENV_SHIM_DEPTH="x"), tmp / "p", "--version")
    check(proc is not None and "V12.4.131" in proc.stdout, f"the project's nvcc: {proc and proc.stderr}")


@case
def a_shim_in_a_deleted_directory_fails_cleanly(tmp):
    env = install_synthetic_toolkits(tmp, PATH="/usr/bin:/bin")
    shims = tmp / "root" / "shims"
    gone = tmp / "gone"
    gone.mkdir()
    os.chmod(gone, 0o755)
    proc = subprocess.run(f"cd {gone} && rmdir {gone} && {shims}/nvcc --version", shell=True, env=env,
                          capture_output=True, text=True, timeout=DEADLINE)
    check(proc.returncode in (1, 3) and len(proc.stderr.strip().splitlines()) <= 2 and "Abort" not in proc.stderr
          and "terminate called" not in proc.stderr, f"in a deleted directory: {proc.returncode} {proc.stderr!r}")


def tool_names(count):
    return [f"tool{i:03d}" for i in range(count)]


@case
def concurrent_rehash_install_and_uninstall_lose_no_shim(tmp):
    env = install_synthetic_toolkits(tmp, PATH="/usr/bin:/bin")
    root = tmp / "root"
    # Many tools make each rehash long enough for the others to run into it.
    bin_dir = root / "toolkits" / "12.1.1" / "bin"
    for name in tool_names(150):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    failures = []

    def rehash_loop():
        for _ in range(6):
            proc = subprocess.run([BINARY, "rehash"], env=env, capture_output=True, text=True, timeout=120)
            if proc.returncode != 0:
                failures.append(f"rehash: {proc.returncode} {proc.stderr[-300:]}")

    with mirror_server(tmp / "mirror") as (url, _):
        def install_loop():
            for _ in range(2):
                for args in (["uninstall", "12.4.1"], ["install", "12.4.1", "--mirror", url]):
                    proc = subprocess.run([BINARY, *args], env=env, capture_output=True, text=True, timeout=120)
                    if proc.returncode != 0:
                        failures.append(f"{args[0]}: {proc.returncode} {proc.stderr[-300:]}")

        threads = [threading.Thread(target=rehash_loop) for _ in range(8)] + [threading.Thread(target=install_loop)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    check(not failures, f"every command succeeds: {failures[:5]}")
    shims = root / "shims"
    expected = sorted(tool_names(150) + ["nvcc"])
    names = sorted(p.name for p in shims.iterdir())
    check(names == expected, f"exactly one shim per tool, nothing left over: {set(names) ^ set(expected)}")
    program = os.path.realpath(os.path.join(os.path.dirname(BINARY), "cudaenv-shim"))
    wrong = [n for n in names if not (shims / n).is_symlink() or os.path.realpath(shims / n) != program]
    check(not wrong, f"every shim links to cudaenv-shim: {wrong[:5]}")


finish()
