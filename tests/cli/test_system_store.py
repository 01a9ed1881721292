"""A shared read-only store: an admin (root) installs toolkits into /opt-like store; an
unprivileged user (uid 65534, its own HOME) sees them through CUDAENV_SYSTEM_ROOTS or the system
config's system_roots in `list`, `exec`, `use` with the real bash hook, the shims,
`verify` and `modules write`; the user's own install of an equal version wins; and nothing the user runs
writes anything below the system store. cuDNN builds in a system store are used the same way:
`list`, `exec`/the hook's LD_LIBRARY_PATH, `modules write` and `verify --cudnn` (or a .cudaenv's
cudnn pin) find them."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from harness import BINARY, SKIP, case, check, clean_env, expect_error, finish, mirror_server, run
from synthetic_mirror import cudnn_release, toolkit_release

NOBODY = 65534


def as_user(args, env, cwd=None, program=None, stdin=None):
    command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *(program or [BINARY]), *args]
    return subprocess.run(command, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60)


def tree(root):
    """Every path below `root` with its type, size and time: what a write would change."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            found[str(path)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def admin_store(tmp, url):
    """Root installs 12.1.1 and 12.4.1 into tmp/opt/cudaenv, as an admin would."""
    system = tmp / "opt" / "cudaenv"
    admin = clean_env(tmp / "admin-home", CUDAENV_ROOT=system)
    for release in ("12.1.1", "12.4.1"):
        run(["install", release, "--mirror", url], admin, check_exit=0)
    return system


def user_env(tmp, **extra):
    home = tmp / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    return clean_env(home, **extra)


def setup(tmp):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: needs root and setpriv to run commands as an unprivileged user", file=sys.stderr)
        sys.exit(SKIP)
    os.chmod(tmp, 0o755)
    toolkit_release(tmp / "mirror", "12.1.1", "12.1.105")
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")


@case
def a_user_sees_and_uses_a_read_only_system_store(tmp):
    setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        system = admin_store(tmp, url)
        before = tree(system)
        env = user_env(tmp, CUDAENV_SYSTEM_ROOTS=f"{system}:/nonexistent/store")
        listed = as_user(["list", "--json"], env)
        check(listed.returncode == 0, f"list: {listed.stderr}")
        installed = json.loads(listed.stdout or "{}").get("installed", [])
        check([(t["version"], t["path"]) for t in installed] ==
              [("12.4.1", str(system / "toolkits" / "12.4.1")), ("12.1.1", str(system / "toolkits" / "12.1.1"))],
              f"list shows the system store's toolkits: {installed}")
        ran = as_user(["exec", "--cuda", "12.1", "--", "nvcc", "--version"], env)
        check(ran.returncode == 0 and "V12.1.105" in ran.stdout, f"exec runs the system nvcc: {ran}")
        project = tmp / "home" / "project"
        project.mkdir()
        os.chown(project, NOBODY, NOBODY)
        check(as_user(["use", "12.1.1"], env, cwd=project).returncode == 0, "use 12.1.1")
        rc = tmp / "home" / "bashrc"
        rc.write_text(f'eval "$("{BINARY}" init bash)"\n')
        hook = as_user(["--rcfile", str(rc), "-i"], env, cwd=tmp / "home", program=["bash"],
                       stdin=f'cd "{project}"\necho "HOME=$CUDA_HOME"; nvcc --version\n')
        check(f"HOME={system / 'toolkits' / '12.1.1'}" in hook.stdout and "V12.1.105" in hook.stdout,
              f"the bash hook activates the system toolkit: {hook}")
        rehash = as_user(["rehash"], env)
        shim = tmp / "home" / ".local" / "share" / "cudaenv" / "shims" / "nvcc"
        check(rehash.returncode == 0 and shim.exists(), f"shims in the user's root: {rehash}")
        shimmed = as_user(["--version"], env, cwd=project, program=[str(shim)])
        check("V12.1.105" in shimmed.stdout, f"the shim runs the system toolkit: {shimmed}")
        mods = as_user(["modules", "write", str(tmp / "home" / "modulefiles")], env)
        check(mods.returncode == 0 and "wrote cuda/12.1.1.lua" in mods.stdout, f"modules write: {mods}")
        text = (tmp / "home" / "modulefiles" / "cuda" / "12.1.1.lua").read_text() if mods.returncode == 0 else ""
        check(f"system store {system}" in text, "the modulefile names the store it comes from")
        verified = as_user(["verify", "12.1.1"], env, cwd=project)
        check(verified.returncode != 3 and str(system / "toolkits" / "12.1.1") in verified.stdout + verified.stderr,
              f"verify finds the system toolkit (this machine may have no GPU to run it): {verified}")
        own = as_user(["install", "12.4.1", "--mirror", url], env)
        check(own.returncode == 0, f"the user installs 12.4.1 into their own root: {own.stderr}")
        mine = as_user(["exec", "--cuda", "12.4.1", "--", "sh", "-c", 'echo "$CUDA_HOME"'], env)
        check(mine.stdout.strip() == str(tmp / "home" / ".local" / "share" / "cudaenv" / "toolkits" / "12.4.1"),
              f"the user's root wins on an equal version: {mine}")
        check(tree(system) == before, "nothing was written below the system store")


@case
def a_user_uses_cudnn_from_a_read_only_system_store(tmp):
    setup(tmp)
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    with mirror_server(tmp / "mirror") as (url, _):
        system = tmp / "opt" / "cudaenv"
        admin = clean_env(tmp / "admin-home", CUDAENV_ROOT=system)
        run(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], admin, check_exit=0)
        shared = system / "cudnn" / "9.1.0-cuda12"
        before = tree(system)
        env = user_env(tmp, CUDAENV_SYSTEM_ROOTS=str(system))
        project = tmp / "home" / "project"
        project.mkdir()
        os.chown(project, NOBODY, NOBODY)

        listed = as_user(["list", "--json"], env)
        cudnn = [(c["version"], c["path"]) for c in json.loads(listed.stdout or "{}").get("cudnn", [])]
        check(cudnn == [("9.1.0", str(shared))], f"list shows the system store's cuDNN: {listed}")
        check(as_user(["use", "12.4", "--cudnn", "9.1"], env, cwd=project).returncode == 0, "use --cudnn")
        ran = as_user(["exec", "--", "sh", "-c", 'echo "$LD_LIBRARY_PATH"'], env, cwd=project)
        check(str(shared / "lib") in ran.stdout, f"the system cuDNN is on LD_LIBRARY_PATH: {ran}")
        mods = as_user(["modules", "write", str(tmp / "home" / "modulefiles")], env)
        check("wrote cudnn/9.1.0-cuda12.lua" in mods.stdout, f"a modulefile for the system cuDNN: {mods}")

        # verify --cudnn SPEC, and the .cudaenv's cudnn pin, find the system cuDNN. This machine
        # has no GPU and the synthetic nvcc builds nothing: verify says so (exit 7), and that the
        # cuDNN library it chose was not checked. It is never "not installed" (exit 3).
        for args in (["verify", "12.4", "--cudnn", "9.1"], ["verify"]):
            shown = as_user(args, env, cwd=project)
            check(shown.returncode == 7, f"{args}: exit {shown.returncode}, expected 7: {shown}")
            check(f"cuDNN      {shared}/" in shown.stdout and "not checked" in shown.stdout,
                  f"{args}: the cuDNN row names the system cuDNN and what was skipped: {shown}")
            report = as_user([*args, "--json"], env, cwd=project)
            library = (json.loads(report.stdout or "{}").get("cudnn") or {}).get("library", "")
            check(library.startswith(str(shared) + "/"), f"{args} --json: the system cuDNN: {report}")

        # A system store whose cudnn/ anyone could write is left out, as one whose toolkits/ is:
        # verify would load libraries from it.
        mode = (system / "cudnn").stat().st_mode
        os.chmod(system / "cudnn", 0o777)
        listed = as_user(["list", "--json"], env)
        check(str(system) not in listed.stdout and listed.returncode == 0,
              f"a store with a world-writable cudnn/ is not used: {listed}")
        os.chmod(system / "cudnn", mode)

        # The user's own cuDNN of the same version wins; the system store is never written to.
        own = as_user(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], env)
        check(own.returncode == 0, f"the user installs cuDNN 9.1 into their own root: {own.stderr}")
        mine = tmp / "home" / ".local" / "share" / "cudaenv" / "cudnn" / "9.1.0-cuda12"
        report = as_user(["verify", "12.4", "--cudnn", "9.1", "--json"], env, cwd=project)
        library = (json.loads(report.stdout or "{}").get("cudnn") or {}).get("library", "")
        check(library.startswith(str(mine) + "/"), f"the user's root wins on an equal version: {report}")
        check(tree(system) == before, "nothing was written below the system store")


@case
def the_system_config_names_the_stores(tmp):
    setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        system = admin_store(tmp, url)
    config = tmp / "etc" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'system_roots = ["{system}"]\n')
    env = user_env(tmp, CUDAENV_SYSTEM_CONFIG=config)
    listed = as_user(["list", "--json"], env)
    versions = [t["version"] for t in json.loads(listed.stdout or "{}").get("installed", [])]
    check(versions == ["12.4.1", "12.1.1"], f"system_roots in the system config: {listed}")
    config.write_text('system_roots = "/opt/cudaenv"\n')
    expect_error(as_user(["list"], env), 2, f"{config}:1", "system_roots must be a list")


@case
def list_marks_system_store_toolkits_and_uninstall_says_who_removes_them(tmp):
    setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        system = admin_store(tmp, url)
    before = tree(system)
    env = user_env(tmp, CUDAENV_SYSTEM_ROOTS=str(system))
    listed = as_user(["list"], env)
    for release in ("12.4.1", "12.1.1"):
        check(f"{release} (system store {system})" in listed.stdout, f"list marks {release}: {listed.stdout}")
    data = json.loads(as_user(["list", "--json"], env).stdout or "{}").get("installed", [])
    check([(t.get("store"), t.get("store_root")) for t in data] == [("system", str(system))] * 2,
          f"list --json names the store: {data}")
    gone = as_user(["uninstall", "12.4.1"], env)
    expect_error(gone, 1, f"CUDA 12.4.1 is in the system store {system}", "read-only to cudaenv for users")
    check(f"CUDAENV_ROOT={system} cudaenv uninstall 12.4.1" in gone.stderr,
          f"the hint says how its administrator removes it: {gone.stderr!r}")
    check(tree(system) == before, "nothing below the system store was touched")
    expect_error(as_user(["uninstall", "11.8"], env), 3, "is not installed")


finish()
