"""Every file cudaenv writes in place goes through one writer that a planted symlink cannot
redirect: not at the file's own name, not at any temporary name the writer might use. A cloned
repository is full of names cudaenv writes (.cudaenv, .cudaenv.lock); before the one writer,
`cudaenv use` wrote through `.cudaenv.tmp-<pid>`, so a repository holding that name as a link to
~/.bashrc had `use` overwrite the user's shell startup file with the repository's text."""

import os
from pathlib import Path

from harness import BINARY, case, check, finish, install_synthetic_toolkits


def run_with_planted_names(args, env, cwd, plant):
    """Runs cudaenv ARGS in `cwd`; `plant(pid)` runs after the process exists and before it
    starts, so it can plant links under names that hold the pid. Returns (exit code, stderr)."""
    ready_read, ready_write = os.pipe()
    err_path = Path(cwd) / ".." / f"stderr-{os.getpid()}"
    pid = os.fork()
    if pid == 0:  # the child: wait for the links, then become cudaenv with the same pid
        os.close(ready_write)
        os.read(ready_read, 1)
        os.chdir(cwd)
        fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execve(BINARY, [BINARY, *args], env)
    os.close(ready_read)
    try:
        plant(pid)
    finally:
        os.write(ready_write, b"x")
        os.close(ready_write)
    _, status = os.waitpid(pid, 0)
    stderr = Path(err_path).read_text()
    os.unlink(err_path)
    return os.waitstatus_to_exitcode(status), stderr


def victim(tmp):
    path = Path(tmp) / "home-bashrc"
    path.write_text("# the user's own shell setup\nexport EDITOR=vim\n")
    return path


def plant_links(directory, name, target, pid):
    """Links to `target` under every name the writer could use for `name` that an attacker can
    predict: the name itself and NAME.tmp-PID (and a spray of neighbouring pids)."""
    (directory / name).unlink(missing_ok=True)
    (directory / name).symlink_to(target)
    for candidate in range(max(pid - 64, 1), pid + 64):
        link = directory / f"{name}.tmp-{candidate}"
        if not link.exists() and not link.is_symlink():
            link.symlink_to(target)


@case
def use_in_a_hostile_clone_never_writes_through_its_links(tmp):
    env = install_synthetic_toolkits(tmp)
    bashrc = victim(tmp)
    original = bashrc.read_text()
    repo = tmp / "clone"
    repo.mkdir()
    code, stderr = run_with_planted_names(["use", "12.4"], env, repo,
                                          lambda pid: plant_links(repo, ".cudaenv", bashrc, pid))
    check(code == 0, f"use exits 0: {stderr}")
    check(bashrc.read_text() == original, f"~/.bashrc was overwritten:\n{bashrc.read_text()}")
    check(not (repo / ".cudaenv").is_symlink(), "the link at .cudaenv was replaced by the project file")
    check('cuda = "12.4"' in (repo / ".cudaenv").read_text(), (repo / ".cudaenv").read_text())
    leftovers = [p.name for p in repo.iterdir() if not p.is_symlink() and p.name != ".cudaenv"]
    check(leftovers == [], f"no temporary file is left in the repository: {leftovers}")


@case
def unpinning_in_a_hostile_clone_never_writes_through_its_links(tmp):
    env = install_synthetic_toolkits(tmp)
    bashrc = victim(tmp)
    original = bashrc.read_text()
    repo = tmp / "clone"
    repo.mkdir()
    (repo / ".cudaenv").write_text('cuda = "12.1"\n[frameworks]\ntorch = "2.5"\n')

    def plant(pid):
        for candidate in range(max(pid - 64, 1), pid + 64):
            (repo / f".cudaenv.tmp-{candidate}").symlink_to(bashrc)

    code, stderr = run_with_planted_names(["use", "--unset"], env, repo, plant)
    check(code == 0, f"use --unset exits 0: {stderr}")
    check(bashrc.read_text() == original, f"~/.bashrc was overwritten:\n{bashrc.read_text()}")


@case
def the_global_pin_never_writes_through_a_planted_link(tmp):
    env = install_synthetic_toolkits(tmp)
    bashrc = victim(tmp)
    original = bashrc.read_text()
    config_dir = Path(env["HOME"]) / ".config" / "cudaenv"
    config_dir.mkdir(parents=True)
    code, stderr = run_with_planted_names(
        ["use", "--global", "12.1"], env, tmp,
        lambda pid: [(config_dir / f"config.toml.tmp-{c}").symlink_to(bashrc)
                     for c in range(max(pid - 64, 1), pid + 64)])
    check(code == 0, f"use --global exits 0: {stderr}")
    check(bashrc.read_text() == original, f"~/.bashrc was overwritten:\n{bashrc.read_text()}")
    check('cuda = "12.1"' in (config_dir / "config.toml").read_text(), "the config holds the pin")


finish()
