"""Unpinning and the files `cudaenv use` writes: `use --unset` removes this directory's pin (the
`cuda` line, or the whole file when nothing else is set) and says which; `use --global system`
removes the global pin, keeping the config's other settings; comments survive every edit, the one
on a bare version line too; and `use` names the real cause when it may not write: a directory you
cannot write, a .cudaenv that belongs to someone else."""

import atexit
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import BINARY, case, check, clean_env, expect_error, finish, global_config, install_synthetic_toolkits

OTHER_UID = 65534

_STORE = Path(tempfile.mkdtemp(prefix="cudaenv-unpin-store-"))
atexit.register(shutil.rmtree, _STORE, ignore_errors=True)
_STORE_ENV = install_synthetic_toolkits(_STORE)


def user_env(tmp):
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return clean_env(home, CUDAENV_ROOT=_STORE_ENV["CUDAENV_ROOT"])


def cudaenv(args, env, cwd, **kwargs):
    return subprocess.run([BINARY, *args], env=dict(env, PWD=str(cwd)), cwd=cwd, capture_output=True, text=True,
                          timeout=60, **kwargs)


@case
def a_bare_version_keeps_its_comment_when_use_rewrites_it(tmp):
    env = user_env(tmp)
    (tmp / "p").mkdir()
    pin = tmp / "p" / ".cudaenv"
    pin.write_text("13.0  # A100 nodes\n")
    proc = cudaenv(["use", "12.4"], env, tmp / "p")
    check(proc.returncode == 0, f"use exits 0: {proc.stderr}")
    check(pin.read_text() == 'cuda = "12.4"  # A100 nodes\n', f"the comment survives: {pin.read_text()!r}")
    pin.write_text("# cluster pin\n12.1\t# V100 nodes\n# keep me\n")
    cudaenv(["use", "12.4", "--cudnn", "9.1"], env, tmp / "p")
    check(pin.read_text() == '# cluster pin\ncuda = "12.4"  # V100 nodes\n# keep me\ncudnn = "9.1"\n',
          f"every comment survives: {pin.read_text()!r}")


@case
def unset_removes_a_file_that_pins_only_cuda_and_the_global_default_applies(tmp):
    env = user_env(tmp)
    config = global_config(env, 'cuda = "12.1"\n')
    proj = tmp / "proj"
    proj.mkdir()
    (proj / ".cudaenv").write_text("12.4  # for the A100s\n")
    check(cudaenv(["current"], env, proj).stdout == f"12.4.1 (from {proj}/.cudaenv)\n", "the project pin applies")
    proc = cudaenv(["use", "--unset"], env, proj)
    check(proc.returncode == 0, f"exit 0: {proc.stderr}")
    check(not (proj / ".cudaenv").exists(), "the file is gone")
    check(proc.stdout == f"removed {proj}/.cudaenv (it set nothing but cuda)\nnow here: 12.1 (from {config})\n",
          f"it says what it did and what applies now: {proc.stdout!r}")
    check(cudaenv(["current"], env, proj).stdout == f"12.1.1 (from {config})\n", "current: the global default")
    again = cudaenv(["use", "--unset"], env, proj)
    check(again.returncode == 0 and again.stdout == f"nothing to unset: no .cudaenv in {proj}\n", repr(again.stdout))


@case
def unset_keeps_a_file_with_other_settings_and_its_comments(tmp):
    env = user_env(tmp)
    proj = tmp / "proj"
    (proj / "sub").mkdir(parents=True)
    pin = proj / ".cudaenv"
    pin.write_text('# team pins\ncuda = "12.4"  # A100\ncudnn = "9.1"\n\n[frameworks]\ntorch = "2.5"  # see ticket\n')
    proc = cudaenv(["use", "--unset"], env, proj)
    check(proc.returncode == 0, f"exit 0: {proc.stderr}")
    check(pin.read_text() == '# team pins\ncudnn = "9.1"\n\n[frameworks]\ntorch = "2.5"  # see ticket\n',
          f"only the cuda line left: {pin.read_text()!r}")
    check(proc.stdout.startswith(f"removed cuda from {pin}; the file stays for its other settings"), proc.stdout)
    check(f"now here: system (from {pin})" in proc.stdout, proc.stdout)
    check(cudaenv(["current"], env, proj).stdout == "system\n", "current: system")
    # A pin made in a parent directory is named, not silently left in force.
    pin.write_text('cuda = "12.4"\n')
    expect_error(cudaenv(["use", "--unset"], env, proj / "sub"), 3, f"no .cudaenv in {proj}/sub",
                 f"the pin here comes from {pin}")
    check(pin.read_text() == 'cuda = "12.4"\n', "the parent's file is left as it is")


@case
def global_system_removes_the_global_pin_and_keeps_the_rest(tmp):
    env = user_env(tmp)
    config = global_config(env, '# my defaults\ncuda = "12.4"  # newest\nmirror = "http://mirror.example"\n\n'
                                '[download]\njobs = 4\n')
    check(cudaenv(["current"], env, tmp).stdout == f"12.4.1 (from {config})\n", "the global pin applies")
    proc = cudaenv(["use", "--global", "system"], env, tmp)
    check(proc.returncode == 0, f"exit 0: {proc.stderr}")
    check(config.read_text() == '# my defaults\nmirror = "http://mirror.example"\n\n[download]\njobs = 4\n',
          f"only the pin left: {config.read_text()!r}")
    check(proc.stdout == f"removed the global pin (cuda) from {config}; outside projects the system toolkit "
                         f"applies\nnow here: system (nothing pins a version)\n", repr(proc.stdout))
    check(cudaenv(["current"], env, tmp).stdout == "system\n", "current: system")
    again = cudaenv(["use", "--global", "--unset"], env, tmp)
    check(again.returncode == 0 and f"no global pin to remove: {config} sets no cuda" in again.stdout, again.stdout)
    expect_error(cudaenv(["use", "system"], env, tmp), 2, "--global")
    check("cudaenv use --unset" in cudaenv(["use", "system"], env, tmp).stderr, "the hint names --unset")
    expect_error(cudaenv(["use", "--unset", "12.4"], env, tmp), 2, "--unset takes no SPEC")
    expect_error(cudaenv(["use"], env, tmp), 2, "SPEC is required")


def as_other_user():
    os.setgroups([])
    os.setgid(OTHER_UID)
    os.setuid(OTHER_UID)


@case
def use_names_the_real_reason_it_cannot_write(tmp):
    if os.geteuid() != 0:
        print("skip: needs root to act as, and own files for, another user")
        return
    name = pwd.getpwuid(OTHER_UID).pw_name
    os.chmod(tmp, 0o755)
    home = tmp / "home"
    home.mkdir()
    (home / "root").mkdir()
    for path in (home, home / "root"):
        os.chown(path, OTHER_UID, OTHER_UID)
    env = clean_env(home, CUDAENV_ROOT=home / "root")
    locked = tmp / "locked"  # root's directory, mode 0755: the other user cannot write in it
    locked.mkdir()
    os.chmod(locked, 0o755)
    proc = cudaenv(["use", "12.4"], env, locked, preexec_fn=as_other_user)
    expect_error(proc, 1, f"cannot write {locked}/.cudaenv: the directory {locked} is not writable by you",
                 "it belongs to root (uid 0), mode 0755")
    check("CUDAENV_VERSION=12.4" in proc.stderr, f"the hint offers what works without the file: {proc.stderr!r}")

    shared = tmp / "shared"
    shared.mkdir()
    theirs = shared / ".cudaenv"
    theirs.write_text('cuda = "12.1"  # their pin\n')
    os.chown(theirs, OTHER_UID, OTHER_UID)
    (tmp / "me").mkdir()
    proc = cudaenv(["use", "12.4"], user_env(tmp / "me"), shared)
    expect_error(proc, 1, f"{theirs} belongs to {name} (uid {OTHER_UID}), not to you")
    check(f"ask {name} (uid {OTHER_UID}) to change it" in proc.stderr, proc.stderr)
    check(theirs.read_text() == 'cuda = "12.1"  # their pin\n' and theirs.stat().st_uid == OTHER_UID,
          "their file is left as it was")


finish()
