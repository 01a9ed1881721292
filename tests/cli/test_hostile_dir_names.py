"""A directory name is text anyone can choose (a cloned repository's folders): ESC sequences, a
newline, `$(...)`, quotes. Entered in real bash, zsh and fish with the prompt hook, such a project
is activated like any other, nothing in the name runs, the shell keeps answering, and no raw
control byte reaches hook-env's output (it is shell code the user may print) or its messages."""

import subprocess
from pathlib import Path

from harness import BINARY, case, check, finish, install_synthetic_toolkits
from shells import SHELLS, run_shell

MARKER = "name-ran"


def hostile_name(tmp):
    """ESC ]0; (retitle the window), BEL, CSI, a newline, command substitutions, both quotes."""
    return f"p\x1b]0;owned\x07\x1b[2J\n$(touch {MARKER})`touch {MARKER}`'\"\\ end\n"


def hostile_project(tmp):
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"}, PATH="/usr/bin:/bin")
    project = tmp / hostile_name(tmp)
    (project / "sub").mkdir(parents=True)
    (project / ".cudaenv").write_text('cuda = "12.4"\n')
    return env, project


def nothing_ran(tmp, what):
    ran = list(tmp.rglob(MARKER)) + list(Path("/").glob(MARKER))
    check(not ran, f"{what}: nothing in the name ran: {ran}")


def no_raw_controls(text, what):
    raw = sorted({f"0x{ord(c):02x}" for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})
    check(not raw, f"{what}: raw control bytes {raw} in {text!r}")


def statements(text):
    """hook-env's output is one statement per line: a raw newline inside a value would add one."""
    return [line for line in text.splitlines() if line]


@case
def hook_env_prints_no_raw_control_byte(tmp):
    env, project = hostile_project(tmp)
    for shell in ("bash", "zsh", "fish"):
        proc = subprocess.run([BINARY, "hook-env", "--shell", shell], env=env, cwd=project, capture_output=True,
                              timeout=60)
        out, err = proc.stdout.decode("latin-1"), proc.stderr.decode("latin-1")
        check(proc.returncode == 0, f"{shell}: hook-env answers: {err!r}")
        no_raw_controls(out, f"{shell}: hook-env's statements")
        no_raw_controls(err, f"{shell}: hook-env's messages")
        lines = statements(out)
        check(all(line.endswith(";") for line in lines), f"{shell}: each line is a whole statement: {lines}")
        if shell in SHELLS:
            # The statements give the shell back the exact name: the watch list's first path.
            show = ('printf "%s" "${__cudaenv_watch[1]}"' if shell == "zsh" else
                    'printf "%s" "${__cudaenv_watch[0]}"' if shell == "bash" else
                    'printf "%s" $__cudaenv_watch[1]')
            evaluated = subprocess.run([shell, "-c", proc.stdout.decode("latin-1") + "\n" + show], env=env,
                                       capture_output=True, timeout=60)
            check(evaluated.stdout.decode("utf-8", "surrogateescape") == str(project / ".cudaenv"),
                  f"{shell}: the name comes back exactly: {evaluated.stdout!r} {evaluated.stderr!r}")
    nothing_ran(tmp, "hook-env")


@case
def entering_the_directory_in_real_shells_runs_nothing(tmp):
    env, project = hostile_project(tmp)
    env = dict(env, HOSTILE_DIR=str(project))
    for shell in SHELLS:
        enter = "cd $HOSTILE_DIR" if shell == "fish" else 'cd "$HOSTILE_DIR"'
        # From a directory below it the hook walks up through the name: the walk must see it whole.
        lines = [enter, "echo \"active=[$CUDAENV_ACTIVE]\"", "cd sub", "echo \"below=[$CUDAENV_ACTIVE]\"",
                 "cd /", "echo \"left=[$CUDAENV_ACTIVE]\""]
        proc = run_shell(shell, tmp, env, lines, timeout=60)
        output = proc.stdout + proc.stderr
        check("== end" in proc.stdout, f"{shell}: the shell kept answering: {output[-2000:]!r}")
        check("active=[12.4.1]" in proc.stdout, f"{shell}: the project was activated: {output[-2000:]!r}")
        check("below=[12.4.1]" in proc.stdout, f"{shell}: and below it: {output[-2000:]!r}")
        check("left=[]" in proc.stdout, f"{shell}: leaving it deactivates: {output[-2000:]!r}")
        check("cudaenv:" not in output, f"{shell}: no complaint: {output[-2000:]!r}")
        nothing_ran(tmp, shell)


finish()
