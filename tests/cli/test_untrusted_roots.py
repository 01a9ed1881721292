"""A data root or config file another user controls is refused (as git's safe.directory and ssh's
StrictModes refuse theirs): owned by someone else, or group/world-writable without the sticky bit
on a directory of our own. Every path that would run a toolkit from the store (exec, the shims,
env, which, the prompt hook, verify, install, use) stops with one clear error, exit 1, and a
toolkit planted there never runs."""

import os
import subprocess
from pathlib import Path

from harness import (BINARY, case, check, clean_env, expect_error, finish, install_synthetic_toolkits,
                     mirror_server)

AS_ROOT = os.geteuid() == 0
OTHER_UID = 65534


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def planted_store(tmp):
    """A store with 12.4.1 installed and shims made, whose nvcc is then replaced by one that
    leaves a marker file: the program another user would plant. Returns (env, project, marker)."""
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"}, PATH="/usr/bin:/bin")
    cudaenv(["rehash"], env, tmp)
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.4"\n')
    marker = tmp / "planted-nvcc-ran"
    nvcc = tmp / "root" / "toolkits" / "12.4.1" / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\ntouch {marker}\necho planted\n")
    nvcc.chmod(0o755)
    return env, project, marker


def bash_hook(env, project):
    """An interactive bash with the hook: enter the project, try nvcc, show CUDA_HOME."""
    rc = Path(env["HOME"]) / "rc"
    rc.write_text(subprocess.run([BINARY, "init", "bash"], env=env, capture_output=True, text=True).stdout)
    script = f"cd {project}\nnvcc --version\necho \"CUDA_HOME=[$CUDA_HOME]\"\nexit\n"
    return subprocess.run(["bash", "--noprofile", "--rcfile", str(rc), "-i"], input=script, env=dict(env, TERM="dumb"),
                          cwd=env["HOME"], capture_output=True, text=True, timeout=60)


def every_entry_point_refuses(tmp, env, project, marker, *needles):
    """exec, the shim, env, which, the bash hook, verify, use and install all refuse; nothing planted runs."""
    root = tmp / "root"
    for args in (["exec", "--", "nvcc", "--version"], ["env", "--shell", "bash"], ["which", "nvcc"],
                 ["verify"], ["use", "12.4"]):
        expect_error(cudaenv(args, env, project), 1, *needles)
    shim = subprocess.run([str(root / "shims" / "nvcc"), "--version"], env=env, cwd=project, capture_output=True,
                          text=True, timeout=60)
    check(shim.returncode == 1 and any(n in shim.stderr for n in needles), f"the shim refuses: {shim.stderr!r}")
    hook = bash_hook(env, project)
    refusals = [line for line in hook.stderr.splitlines() if needles[0] in line]
    check(len(refusals) == 1, f"the hook says it in one line: {hook.stderr!r}")
    check("CUDA_HOME=[]" in hook.stdout, f"the hook leaves the environment without a toolkit: {hook.stdout!r}")
    with mirror_server(tmp / "mirror") as (url, _):
        expect_error(cudaenv(["install", "12.4.1", "--force", "--mirror", url], env, tmp), 1, *needles)
    check(not marker.exists(), "the planted nvcc never ran")


@case
def a_world_writable_root_is_refused_everywhere(tmp):
    env, project, marker = planted_store(tmp)
    root = tmp / "root"
    root.chmod(0o777)
    every_entry_point_refuses(tmp, env, project, marker, f"data root {root} is writable by every user (mode 0777)",
                              "a toolkit planted there would run as you")
    line = expect_error(cudaenv(["exec", "--", "nvcc"], env, project), 1)
    proc = cudaenv(["exec", "--", "nvcc"], env, project)
    check(f"chmod go-w {root}" in proc.stderr and "CUDAENV_ROOT" in proc.stderr, f"the hint says the fix: {proc.stderr!r}")
    check(line.count("\n") == 0, "one line")


@case
def a_group_writable_toolkits_directory_is_refused(tmp):
    env, project, marker = planted_store(tmp)
    toolkits = tmp / "root" / "toolkits"
    toolkits.chmod(0o775)
    every_entry_point_refuses(tmp, env, project, marker,
                              f"data root directory {toolkits} is writable by its group (mode 0775)")


@case
def a_sticky_world_writable_root_of_our_own_is_accepted(tmp):
    env, project, marker = planted_store(tmp)
    root = tmp / "root"
    root.chmod(0o1777)
    proc = cudaenv(["exec", "--", "nvcc", "--version"], env, project)
    check(proc.returncode == 0 and marker.exists(), f"a sticky root of ours is used: {proc.stderr!r}")
    # The sticky bit protects only the owner's entries: a sticky toolkits/ owned by someone else is not ours.
    if AS_ROOT:
        toolkits = root / "toolkits"
        toolkits.chmod(0o1777)
        os.chown(toolkits, OTHER_UID, OTHER_UID)
        expect_error(cudaenv(["exec", "--", "nvcc"], env, project), 1,
                     f"data root directory {toolkits} is owned by uid {OTHER_UID} (you are 0)")


@case
def a_root_owned_by_another_user_is_refused(tmp):
    if not AS_ROOT:
        print("skip: a root owned by another user needs root to chown")
        return
    env, project, marker = planted_store(tmp)
    root = tmp / "root"
    os.chown(root, OTHER_UID, OTHER_UID)
    every_entry_point_refuses(tmp, env, project, marker, f"data root {root} is owned by uid {OTHER_UID} (you are 0)",
                              "a toolkit planted there would run as you")
    proc = cudaenv(["exec", "--", "nvcc"], env, project)
    check(f"chown 0 {root}" in proc.stderr, f"the hint names the chown: {proc.stderr!r}")


def global_config(tmp):
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"}, XDG_CONFIG_HOME=tmp / "config")
    config = tmp / "config" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('cuda = "12.4"\n')
    outside = tmp / "elsewhere"
    outside.mkdir()
    check(cudaenv(["current"], env, outside).stdout.startswith("12.4.1"), "the global config applies")
    return env, config, outside


@case
def a_config_others_can_write_is_refused(tmp):
    env, config, outside = global_config(tmp)
    config.chmod(0o666)
    for args in (["current"], ["exec", "--", "nvcc", "--version"], ["use", "12.4", "--global"]):
        expect_error(cudaenv(args, env, outside), 1, f"config file {config} is writable by every user (mode 0666)")
    config.chmod(0o644)
    config.parent.chmod(0o777)
    expect_error(cudaenv(["current"], env, outside), 1, f"config directory {config.parent} is writable by every user")
    hook = bash_hook(env, outside)
    check(sum("config directory" in line for line in hook.stderr.splitlines()) == 1,
          f"the hook refuses it in one line: {hook.stderr!r}")
    config.parent.chmod(0o755)
    check(cudaenv(["current"], env, outside).returncode == 0, "fixed: accepted again")
    if AS_ROOT:
        os.chown(config, OTHER_UID, OTHER_UID)
        expect_error(cudaenv(["current"], env, outside), 1,
                     f"config file {config} is owned by uid {OTHER_UID} (you are 0)")


finish()
