#!/usr/bin/env python3
"""Shell completion: `cudaenv completion bash|zsh|fish` prints a script, generated from the command
table, that real bash, zsh and fish use to complete commands, flags, fixed values and versions
(installed ones for `uninstall`, installed and known releases for `install`)."""

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness import BINARY, case, check, clean_env, expect_error, finish, install_synthetic_toolkits, run  # noqa: E402


def command_env(tmp, env):
    """`env` with a directory holding `cudaenv` first on PATH, as after scripts/setup."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / "cudaenv"
    if not link.exists():
        link.symlink_to(BINARY)
    return dict(env, PATH=f"{bin_dir}:{env['PATH']}")


def listed_commands(env):
    shown = run([], env, check_exit=0).stdout
    block = shown.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def bash_complete(script, env, words):
    """What the script's completion function offers for `words` (the last one being completed)."""
    program = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
               'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; '
               'complete -p cudaenv >/dev/null || exit 9; _cudaenv; printf "%s\\n" "${COMPREPLY[@]}"')
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", program, "bash", str(script), *words],
                          capture_output=True, text=True, env=env, timeout=60)
    check(proc.returncode == 0, f"bash completion of {words} ran: {proc.stderr!r}")
    return [line for line in proc.stdout.splitlines() if line]


def fish_complete(script, env, line):
    proc = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
                          capture_output=True, text=True, env=env, timeout=60)
    check(proc.returncode == 0, f"fish completion of {line!r} ran: {proc.stderr!r}")
    return [entry.split("\t")[0] for entry in proc.stdout.splitlines() if entry]


def installed_env(tmp):
    """A store holding 12.1.1 and 12.4.1, installed from a synthetic mirror."""
    return command_env(tmp, install_synthetic_toolkits(tmp))


@case
def unknown_shell_is_a_usage_error(tmp):
    proc = run(["completion", "tcsh"], clean_env(tmp))
    expect_error(proc, 2, "tcsh")
    check("bash, zsh or fish" in proc.stderr, f"names the shells: {proc.stderr!r}")


@case
def bash_completes_commands_flags_and_versions(tmp):
    env = installed_env(tmp)
    script = tmp / "cudaenv.bash"
    script.write_text(run(["completion", "bash"], env, check_exit=0).stdout)
    if shutil.which("shellcheck"):
        lint = subprocess.run(["shellcheck", "-s", "bash", str(script)], capture_output=True, text=True, timeout=60)
        check(lint.returncode == 0, f"shellcheck: {lint.stdout}")
    # Every command of the table, none kept by hand here.
    offered = bash_complete(script, env, ["cudaenv", ""])
    for command in listed_commands(env):
        check(command in offered, f"{command} offered at the first word: {offered}")
    check("__complete" not in offered and "man" not in offered, f"hidden commands not offered: {offered}")
    check(bash_complete(script, env, ["cudaenv", "ins"]) == ["install"], "ins -> install")
    check("--mirror" in bash_complete(script, env, ["cudaenv", "install", "--mi"]), "install --mi -> --mirror")
    check("--quiet" in bash_complete(script, env, ["cudaenv", "list", "--qu"]), "global --quiet everywhere")
    check(bash_complete(script, env, ["cudaenv", "mirror", "cr"]) == ["create"], "mirror cr -> create")
    installed = bash_complete(script, env, ["cudaenv", "uninstall", "12."])
    check(sorted(installed) == ["12.1.1", "12.4.1"], f"uninstall: installed versions only: {installed}")
    known = bash_complete(script, env, ["cudaenv", "install", "12."])
    check({"12.1.1", "12.4.1", "12.0.0", "12.6.3"} <= set(known), f"install: known releases too: {known}")
    after_flag = bash_complete(script, env, ["cudaenv", "install", "--force", "12.4"])
    check("12.4.1" in after_flag, f"a flag before the version: {after_flag}")
    shells = bash_complete(script, env, ["cudaenv", "env", "--shell", ""])
    check(sorted(shells) == ["bash", "fish", "json", "zsh"], f"env --shell values: {shells}")
    check(sorted(bash_complete(script, env, ["cudaenv", "completion", ""])) == ["bash", "fish", "zsh"],
          "completion's shells")
    check("install" in bash_complete(script, env, ["cudaenv", "help", "in"]), "help completes commands")
    check("12.4.1" in bash_complete(script, env, ["cudaenv", "exec", "--cuda", "12"]), "exec --cuda")


@case
def fish_completes_through_its_own_query(tmp):
    if not shutil.which("fish"):
        print("skip: no fish")
        return
    env = installed_env(tmp)
    script = tmp / "cudaenv.fish"
    script.write_text(run(["completion", "fish"], env, check_exit=0).stdout)
    check(fish_complete(script, env, "cudaenv ins") == ["install"], "ins -> install")
    offered = fish_complete(script, env, "cudaenv ")
    for command in listed_commands(env):
        check(command in offered, f"fish offers {command}: {offered}")
    check("--mirror" in fish_complete(script, env, "cudaenv install --mi"), "install --mi -> --mirror")
    check(sorted(fish_complete(script, env, "cudaenv uninstall 12.")) == ["12.1.1", "12.4.1"],
          "uninstall: installed versions")
    check("12.6.3" in fish_complete(script, env, "cudaenv install 12."), "install: known releases")
    check(fish_complete(script, env, "cudaenv mirror cr") == ["create"], "mirror cr -> create")
    check(sorted(fish_complete(script, env, "cudaenv init ")) == ["bash", "fish", "zsh"], "init's shells")


def zsh_session(env, home, keys, expect, timeout=60):
    """Types `keys` into an interactive zsh (compinit loaded, the completion on fpath) and returns
    the screen text once `expect` matches it (or the time runs out)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("zsh", ["zsh", "-i"], dict(env, ZDOTDIR=str(home), TERM="xterm"))
    output, deadline = b"", time.time() + timeout
    sent = False
    while time.time() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                output += os.read(fd, 65536)
            except OSError:
                break
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", output.decode(errors="replace"))
        if not sent and "READY>" in text:
            os.write(fd, keys.encode())
            sent = True
        elif sent and re.search(expect, text.split("READY>", 1)[-1]):
            break
    os.write(fd, b"\x03exit\n")
    os.close(fd)
    os.waitpid(pid, 0)
    return text.split("READY>", 1)[-1]


@case
def zsh_completes_in_a_real_interactive_shell(tmp):
    if not shutil.which("zsh"):
        print("skip: no zsh")
        return
    env = installed_env(tmp)
    functions = tmp / "site-functions"
    functions.mkdir()
    (functions / "_cudaenv").write_text(run(["completion", "zsh"], env, check_exit=0).stdout)
    home = tmp / "zdot"
    home.mkdir()
    (home / ".zshrc").write_text(f"fpath=({functions} $fpath)\nautoload -Uz compinit\ncompinit -u\n"
                                 "PS1='READY> '\n")
    screen = zsh_session(env, home, "cudaenv insta\t", r"cudaenv install ")
    check("cudaenv install " in screen, f"zsh completed insta -> install: {screen!r}")
    screen = zsh_session(env, home, "cudaenv uninstall 12.\t", r"12\.1\.1.*12\.4\.1|12\.4\.1.*12\.1\.1")
    check("12.1.1" in screen and "12.4.1" in screen, f"zsh listed the installed versions: {screen!r}")
    screen = zsh_session(env, home, "cudaenv install --mirr\t", r"--mirror")
    check("--mirror" in screen, f"zsh completed --mirr -> --mirror: {screen!r}")


@case
def versions_for_completion_stay_quiet(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "no-such-root")
    proc = run(["__complete", "installed"], env, check_exit=0)
    check(proc.stdout == "" and proc.stderr == "", f"an empty store: nothing, silently: {proc!r}")
    proc = run(["__complete", "versions"], env, check_exit=0)
    check("12.4.1" in proc.stdout.split(), f"known releases from the database: {proc.stdout!r}")


finish()
