"""`cudaenv modules write`: modulefiles loaded by the real engines, Lmod (Lua and Tcl files) and
Environment Modules (Tcl), in bash: `module avail` lists them, `module load` then `nvcc --version`
is that toolkit's, `module swap` replaces it, `module unload` gives back the environment exactly
(a CUDA_HOME set before included, but for Lmod reading Tcl files), cuDNN refuses to load without a CUDA of its major, and the
load-time driver check reads fixture drivers below CUDAENV_SYSROOT."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import SKIP, check, clean_env, expect_error, finish, global_config, mirror_server, run
from module_engines import engines, engines_required, missing_engines, module_script
from synthetic_mirror import cudnn_release, toolkit_release

RELEASES = {"11.8.0": "11.8.89", "12.1.1": "12.1.105", "12.4.1": "12.4.131"}
# Variables the engines keep for themselves: not part of "the environment as it was".
BOOKKEEPING = ("__LMOD", "_ModuleTable", "LMOD", "__MODULES", "_LMFILES_", "LOADEDMODULES", "MODULE", "_")


def install_store(tmp):
    for release, nvcc in RELEASES.items():
        toolkit_release(tmp / "mirror", release, nvcc)
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70", variants=("12",))
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "nodriver")
    (tmp / "nodriver").mkdir()
    global_config(env, f'modules_dir = "{tmp / "auto"}"\n')
    with mirror_server(tmp / "mirror") as (url, _):
        for release in RELEASES:
            run(["install", release, "--mirror", url], env, check_exit=0)
        run(["install", "12.4.1", "--cudnn", "9", "--mirror", url], env, check_exit=0)
    return env


def bash(engine_command, modulepath, body, env, cwd):
    """Runs `body` with the engine's `module`; stderr with its line wrapping undone (Lmod wraps
    messages to the terminal's width)."""
    script = module_script(engine_command, modulepath, body)
    proc = subprocess.run(["bash", "-c", script], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    proc.stderr = " ".join(proc.stderr.split())
    return proc


def environ(path):
    pairs = [item.split("=", 1) for item in path.read_bytes().decode().split("\0") if "=" in item]
    return {k: v for k, v in pairs if not k.startswith(BOOKKEEPING) and k not in ("SHLVL", "OLDPWD")}


def load_swap_unload(name, command, modulepath, env, work, root, site_cuda_home):
    """With `site_cuda_home` a CUDA_HOME set before the load must come back (Lua files use
    pushenv; Tcl files keep the value and give it back on unload, which Environment Modules
    honours and Lmod does not)."""
    preset = "export CUDA_HOME=/opt/site-cuda" if site_cuda_home else "unset CUDA_HOME"
    proc = bash(command, modulepath, preset + """
        export PATH=/usr/local/bin:/usr/bin:/bin LD_LIBRARY_PATH=/opt/site/lib
        env -0 > before
        module load cuda/12.1.1 || exit 10
        nvcc --version > v1; echo "$CUDA_HOME" > home1
        module swap cuda/12.1.1 cuda/12.4.1 || exit 11
        nvcc --version > v2; echo "$PATH" > path2
        module unload cuda/12.4.1 || exit 12
        env -0 > after
    """, env, work)
    check(proc.returncode == 0, f"{name}: load, swap, unload ran: {proc.returncode} {proc.stderr}")
    if proc.returncode != 0:
        return
    check("V12.1.105" in (work / "v1").read_text(), f"{name}: nvcc is 12.1.1's: {(work / 'v1').read_text()!r}")
    check((work / "home1").read_text().strip() == str(root / "toolkits" / "12.1.1"), f"{name}: CUDA_HOME")
    check("V12.4.131" in (work / "v2").read_text(), f"{name}: after swap nvcc is 12.4.1's")
    path = (work / "path2").read_text()
    check("12.1.1" not in path and str(root / "toolkits" / "12.4.1" / "bin") in path, f"{name}: PATH {path}")
    before, after = environ(work / "before"), environ(work / "after")
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    check(not changed, f"{name}: unload restores the environment; changed: "
                       f"{[(k, before.get(k), after.get(k)) for k in sorted(changed)]}")


def cudnn_needs_cuda(name, command, modulepath, env, work):
    alone = bash(command, modulepath, 'module load cudnn/9.1.0-cuda12; echo "LD=${LD_LIBRARY_PATH:-}"', env, work)
    check("needs a CUDA 12 toolkit loaded first" in alone.stderr, f"{name}: cuDNN refused: {alone.stderr}")
    check("cudnn" not in alone.stdout, f"{name}: nothing of cuDNN set: {alone.stdout}")
    both = bash(command, modulepath, 'module load cuda/12.4.1 && module load cudnn/9.1.0-cuda12 && '
                                     'echo "LD=$LD_LIBRARY_PATH"', env, work)
    check(both.returncode == 0 and "cudnn/9.1.0-cuda12/lib" in both.stdout, f"{name}: cuDNN after cuda: {both}")


def driver_checks(name, command, modulepath, env, tmp, work):
    old = tmp / "old-driver"
    (old / "sys" / "module" / "nvidia").mkdir(parents=True, exist_ok=True)
    (old / "sys" / "module" / "nvidia" / "version").write_text("470.57.02\n")
    refused = bash(command, modulepath, 'module load cuda/12.4.1; echo "HOME=${CUDA_HOME:-unset}"',
                   {**env, "CUDAENV_SYSROOT": str(old)}, work)
    for needle in ("needs NVIDIA driver", ">= 525.60.13", "this node's driver is 470.57.02", "cuda/11.8.0"):
        check(needle in refused.stderr, f"{name}: old driver refused, naming {needle}: {refused.stderr}")
    check("HOME=unset" in refused.stdout, f"{name}: nothing set: {refused.stdout}")
    minor = tmp / "minor-driver"
    (minor / "proc" / "driver" / "nvidia").mkdir(parents=True, exist_ok=True)
    (minor / "proc" / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
        "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
    notice = bash(command, modulepath, "module load cuda/12.4.1 && nvcc --version",
                  {**env, "CUDAENV_SYSROOT": str(minor)}, work)
    check(notice.returncode == 0 and "V12.4.131" in notice.stdout, f"{name}: loads on 535: {notice}")
    check("535.104.05 is below 550.54.15" in notice.stderr, f"{name}: minor-compat notice: {notice.stderr}")
    login = bash(command, modulepath, "module load cuda/12.4.1 && nvcc --version", env, work)
    check(login.returncode == 0 and "no NVIDIA driver on this node" in login.stderr, f"{name}: login node: {login}")


def engine_cases(tmp, env):
    found = engines()
    missing = missing_engines()
    if missing and engines_required():
        check(False, f"module engines missing, and CUDAENV_REQUIRE_ENGINES=1 requires them: {missing}")
        if not found:
            finish()
    if not found:
        print(f"SKIP: no module engine: {missing}", file=sys.stderr)
        sys.exit(SKIP)
    for engine, why in missing.items():
        print(f"note: {engine} not tested: {why}", file=sys.stderr)
    for fmt in ("lua", "tcl"):
        args = ["modules", "write", str(tmp / fmt)] + (["--format", "tcl"] if fmt == "tcl" else [])
        wrote = run(args, env, check_exit=0)
        suffix = ".lua" if fmt == "lua" else ""
        check(f"wrote cuda/12.4.1{suffix}" in wrote.stdout and f"wrote cudnn/9.1.0-cuda12{suffix}" in wrote.stdout,
              f"modules write {fmt}: {wrote.stdout}")
    engine_env = env  # CUDAENV_SYSROOT: a node without a driver, unless a case says otherwise
    for engine, fmt, command in found:
        name = f"{engine} ({fmt})"
        work = Path(tempfile.mkdtemp(dir=tmp))
        avail = bash(command, tmp / fmt, "module avail 2>&1", engine_env, work)
        for module in ["cuda/11.8.0", "cuda/12.1.1", "cuda/12.4.1", "cudnn/9.1.0-cuda12"]:
            check(module in avail.stdout, f"{name}: avail lists {module}: {avail.stdout}")
        # Lmod undoes neither a Tcl pushenv across a swap nor sets on unload: only unset-before.
        load_swap_unload(name, command, tmp / fmt, engine_env, work, tmp / "root",
                         site_cuda_home=name != "lmod (tcl)")
        cudnn_needs_cuda(name, command, tmp / fmt, engine_env, work)
        driver_checks(name, command, tmp / fmt, engine_env, tmp, work)
        print(f"ok: {name}")


def fake_compilers(tmp):
    """Compilers as Debian installs them: c++ a link to g++-13, g++-11 and g++-12 beside it."""
    bindir = tmp / "compilers"
    bindir.mkdir()
    for name in ("g++-11", "g++-12", "g++-13"):
        (bindir / name).write_text("#!/bin/sh\nexit 0\n")
        (bindir / name).chmod(0o755)
    (bindir / "c++").symlink_to(bindir / "g++-13")
    return bindir


def host_compiler_cases(tmp, env):
    """CUDA 11.8 takes GCC <= 11 (its include/crt/host_config.h): written where c++ is GCC 13 and
    g++-11 is installed, its module sets what activation sets; unload gives the values back."""
    header = tmp / "root" / "toolkits" / "11.8.0" / "include" / "crt" / "host_config.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text("#if defined(__GNUC__)\n#if __GNUC__ > 11\n#error -- unsupported GNU version!\n#endif\n#endif\n")
    bindir = fake_compilers(tmp)
    writer = dict(env, PATH=f"{bindir}:/usr/bin:/bin", CUDAHOSTCXX="/opt/writers/own-g++")
    for fmt in ("lua", "tcl"):
        run(["modules", "write", str(tmp / f"host-{fmt}"), "--format", fmt], writer, check_exit=0)
    gxx11 = str(bindir / "g++-11")
    for engine, fmt, command in engines():
        name = f"{engine} ({fmt})"
        work = Path(tempfile.mkdtemp(dir=tmp))
        restores = name != "lmod (tcl)"
        preset = "export NVCC_PREPEND_FLAGS=-lineinfo" if restores else "unset NVCC_PREPEND_FLAGS"
        proc = bash(command, tmp / f"host-{fmt}", preset + """
            unset CUDAHOSTCXX; export PATH=/usr/local/bin:/usr/bin:/bin
            env -0 > before
            module load cuda/11.8.0 || exit 10
            printf '%s\\n' "${CUDAHOSTCXX-unset}" "${NVCC_PREPEND_FLAGS-unset}" > loaded
            module unload cuda/11.8.0 || exit 11
            env -0 > after
            module load cuda/12.4.1 || exit 12
            printf '%s\\n' "${CUDAHOSTCXX-unset}" > newer
        """, env, work)
        check(proc.returncode == 0, f"{name}: load, unload ran: {proc.returncode} {proc.stderr}")
        if proc.returncode != 0:
            continue
        loaded = (work / "loaded").read_text().splitlines()
        flags = f"-ccbin {gxx11} -lineinfo" if restores else f"-ccbin {gxx11}"
        check(loaded == [gxx11, flags], f"{name}: cuda/11.8.0 sets CUDAHOSTCXX and -ccbin g++-11: {loaded}")
        before, after = environ(work / "before"), environ(work / "after")
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        check(not changed, f"{name}: unload gives the host compiler variables back; changed: "
                           f"{[(k, before.get(k), after.get(k)) for k in sorted(changed)]}")
        check((work / "newer").read_text().strip() == "unset",
              f"{name}: cuda/12.4.1 has no GCC limit: no CUDAHOSTCXX: {(work / 'newer').read_text()!r}")
        print(f"ok: host compiler, {name}")


def kept_current_and_refusals(tmp, env):
    auto = tmp / "auto"
    check(sorted(p.name for p in (auto / "cuda").iterdir()) == ["11.8.0.lua", "12.1.1.lua", "12.4.1.lua"],
          f"install kept modules_dir current: {list((auto / 'cuda').iterdir())}")
    run(["uninstall", "12.1.1"], env, check_exit=0)
    check(sorted(p.name for p in (auto / "cuda").iterdir()) == ["11.8.0.lua", "12.4.1.lua"],
          f"uninstall removed its modulefile: {list((auto / 'cuda').iterdir())}")
    own = tmp / "own" / "cuda"
    own.mkdir(parents=True)
    (own / "12.4.1.lua").write_text("-- the site's own\n")
    expect_error(run(["modules", "write", str(tmp / "own")], env), 2, "not written by cudaenv")
    check((own / "12.4.1.lua").read_text() == "-- the site's own\n", "a site's modulefile is left alone")
    odd = tmp / 'odd"$(touch pwned)'
    (odd / "toolkits" / "12.4.1" / "bin").mkdir(parents=True)
    proc = run(["modules", "write", str(tmp / "odd-out")], {**env, "CUDAENV_ROOT": str(odd)})
    expect_error(proc, 2, "cannot write modulefiles for", "'\"'")
    check(not (tmp / "odd-out").exists(), "nothing written for a path that cannot be quoted")
    expect_error(run(["modules", "write", str(tmp / "x"), "--format", "yaml"], env), 2, "--format")


def main():
    with tempfile.TemporaryDirectory(prefix="cudaenv-modules-") as name:
        tmp = Path(name)
        env = install_store(tmp)
        engine_cases(tmp, env)
        host_compiler_cases(tmp, env)
        kept_current_and_refusals(tmp, env)
        print("ok: kept_current_and_refusals")
    finish()


if __name__ == "__main__":
    main()
