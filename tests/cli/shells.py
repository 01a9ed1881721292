"""Real interactive bash, zsh and fish processes for the CLI tests, each evaluating the prompt hook
of `cudaenv init`: bash (--rcfile) and zsh (ZDOTDIR) read their lines on standard input; fish,
which emits its prompt event only on a terminal, runs under a pseudo-terminal, one line per
prompt."""

import os
import pty
import re
import select
import shutil
import subprocess
import time

from harness import BINARY

SHELLS = [name for name in ("bash", "zsh", "fish") if shutil.which(name)]
WATCHED = ["CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT", "CUDACXX", "CUDAENV_ACTIVE", "PATH", "LD_LIBRARY_PATH"]


def quote(shell, word):
    if shell == "fish":
        return "'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + word.replace("'", "'\\''") + "'"


def show(shell, step, names=WATCHED):
    """Prints `== step` and each of `names` as NAME=[value] or NAME unset."""
    lines = [f"echo '== {step}'"]
    for name in names:
        if shell == "fish":
            lines.append(f"if set -q {name}; printf '%s=[%s]\\n' {name} \"${name}\"; else; echo '{name} unset'; end")
        else:
            lines.append(f"if [ -n \"${{{name}+x}}\" ]; then printf '%s=[%s]\\n' {name} \"${name}\"; "
                         f"else echo '{name} unset'; fi")
    return lines


def prepend_path(shell, entry):
    if shell == "fish":
        return f"set -gx PATH {quote(shell, entry)} $PATH"
    return f"export PATH={quote(shell, entry)}:\"$PATH\""


def prepare_shell(shell, tmp, env, cudaenv=BINARY):
    """The command line and environment of an interactive `shell` whose rc file evaluates the
    hook of `cudaenv`, with a fresh HOME below `tmp`."""
    home = tmp / f"home-{shell}"
    home.mkdir(exist_ok=True)
    env = dict(env, HOME=str(home), TERM="dumb")
    hook = subprocess.run([cudaenv, "init", shell], env=env, capture_output=True, text=True, check=True).stdout
    if shell == "bash":
        (home / "rc").write_text(hook)
        return ["bash", "--noprofile", "--rcfile", str(home / "rc"), "-i"], env
    if shell == "zsh":
        (home / ".zshrc").write_text(hook)
        return ["zsh", "-i"], dict(env, ZDOTDIR=str(home))
    (home / ".config" / "fish").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "fish" / "config.fish").write_text(hook)
    return ["fish", "-i"], dict(env, XDG_CONFIG_HOME=str(home / ".config"))


def run_shell(shell, tmp, env, lines, cudaenv=BINARY, timeout=60):
    """Runs `lines` in an interactive `shell` whose rc file evaluates the hook of `cudaenv`."""
    argv, env = prepare_shell(shell, tmp, env, cudaenv)
    lines = lines + ["echo '== end'"]
    if shell == "fish":
        return run_in_terminal(argv, lines, env, tmp, timeout)
    script = "\n".join(lines + ["exit"]) + "\n"
    return subprocess.run(argv, input=script, env=env, cwd=tmp, capture_output=True, text=True, timeout=timeout)


def run_in_terminal(argv, lines, env, cwd, timeout=60):
    """fish emits its prompt event only on a terminal: drive it through a pseudo-terminal, one
    line per prompt (each prompt event prints a numbered token). Output and errors arrive mixed,
    as on a terminal."""
    counter = ("set -g __prompts 0; function __count_prompts --on-event fish_prompt; "
               "set -g __prompts (math $__prompts + 1); echo PROMPT-EVENT-$__prompts; end; "
               "function fish_prompt; echo -n '> '; end")
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe(argv[0], argv + ["-C", counter], env)
    output = b""

    def wait_for_prompt(number):
        nonlocal output
        token = f"PROMPT-EVENT-{number}\r\n".encode()
        deadline = time.time() + timeout / 2
        while token not in output and time.time() < deadline:
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    output += os.read(fd, 65536)
                except OSError:
                    return

    wait_for_prompt(1)
    for i, line in enumerate(lines):
        os.write(fd, line.encode() + b"\n")
        wait_for_prompt(i + 2)
    os.write(fd, b"exit\n")
    try:
        while select.select([fd], [], [], 5)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            output += chunk
    except OSError:
        pass
    os.waitpid(pid, 0)
    os.close(fd)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode(errors="replace").replace("\r", ""))
    return subprocess.CompletedProcess(argv, 0, text, text)


def steps(output, names=WATCHED):
    """{step: {NAME: value or None}} from the show() blocks."""
    result, current = {}, None
    for line in output.splitlines():
        if line.startswith("== "):
            current = result.setdefault(line[3:], {})
        elif current is not None and line.endswith(" unset") and line[:-6] in names:
            current[line[:-6]] = None
        elif current is not None and "=[" in line and line.endswith("]"):
            name, value = line.split("=[", 1)
            if name in names:
                current[name] = value[:-1]
    return result


