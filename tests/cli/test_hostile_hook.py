"""CUDAENV_DIFF is input, not trusted state: any program can export it. In real bash, zsh and fish,
crafted records (injection in names and values, variables cudaenv does not manage, a record that
would take /usr/bin off PATH or point CUDA_HOME elsewhere, NUL and newline bytes) run nothing,
change nothing, are reported once without their text, and leave the shell answering."""

from urllib.parse import quote as percent

from harness import SKIP, case, check, clean_env, finish
from shells import SHELLS, quote, run_shell, show, steps

SEEN = ["PATH", "EDITOR", "CUDA_HOME", "CUDACXX", "LD_PRELOAD", "BASH_ENV", "CUDAENV_DIFF"]
START_PATH = "/usr/local/bin:/usr/bin:/bin"


def enc(value):
    """Percent-encoding as the record writes it (upper-case hex, '/' ':' '.' '-' '_' literal)."""
    return percent(value, safe="/:.-_+@~")


def records(marker):
    touch = f"touch {marker}"
    # A variable whose name is shell code: bash and fish pass such names on to their children,
    # so the hook's program sees it, holding exactly the value the record says cudaenv set.
    odd_name = f"PWNED;{touch};X"
    return odd_name, [
        f"cudaenv1;{enc(odd_name)} x =y ",
        f"cudaenv1;EDITOR vim ={enc('$(' + touch + ')')} ",
        f"cudaenv1;EDITOR vim ={enc(chr(39) + '; ' + touch + '; ' + chr(39))} ",
        f"cudaenv1;LD_PRELOAD {enc('/tmp/evil.so')} - ",
        f"cudaenv1;BASH_ENV x ={enc(str(marker))} ",
        f"cudaenv1;PROMPT_COMMAND x ={enc(touch)} ",
        f"cudaenv1;PATH {enc(START_PATH)} ={enc('/tmp/evil-bin')} /usr/bin,/bin",
        f"cudaenv1;CUDA_HOME {enc('/opt/vendor-cuda')} ={enc('/tmp/evil')} ",
        f"cudaenv1;CUDA_HOME {enc('/opt/vendor-cuda')} =%0A{enc(touch)}%0A ",
        f"cudaenv1;EDITOR vim =a%00b%0A{enc(touch)} ",
        f"cudaenv1;CUDACXX {enc('/opt/vendor-cuda/bin/nvcc')} =$({touch}) ",
        f"cudaenv1;PATH {enc(START_PATH)} - ;PATH {enc(START_PATH)} - ",
        f"cudaenv1;PATH {enc(START_PATH)} =/tmp/evil-bin /usr/bin;EDITOR vim =x ",
    ]


def set_record(shell, text):
    """Exports CUDAENV_DIFF and forgets the hook's key, so the next prompt runs hook-env."""
    if shell == "fish":
        return f"set -gx CUDAENV_DIFF {quote(shell, text)}; set -g __cudaenv_key ''"
    return f"export CUDAENV_DIFF={quote(shell, text)}; __cudaenv_key="


@case
def crafted_records_run_nothing_and_change_nothing(tmp):
    marker = tmp / "pwned"
    odd_name, crafted = records(marker)
    (tmp / "root").mkdir()
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", PATH=START_PATH, EDITOR="vim",
                    CUDA_HOME="/opt/vendor-cuda", CUDACXX="/opt/vendor-cuda/bin/nvcc")
    env[odd_name] = "x"
    for shell in SHELLS:
        # The first record comes with the shell's own environment, the others at later prompts.
        lines = show(shell, "start", SEEN) + ["echo 'ali''ve 0'"]
        for i, text in enumerate(crafted[1:], 1):
            lines += [set_record(shell, text), "true"] + show(shell, f"after {i}", SEEN) + [f"echo 'ali''ve {i}'"]
        proc = run_shell(shell, tmp, dict(env, CUDAENV_DIFF=crafted[0]), lines)
        seen = steps(proc.stdout, SEEN)
        output = proc.stdout if shell == "fish" else proc.stdout + proc.stderr  # fish: one terminal
        check(not marker.exists(), f"{shell}: a crafted CUDAENV_DIFF ran a command")
        marker.unlink(missing_ok=True)
        for i in range(len(crafted)):
            check(f"alive {i}" in proc.stdout, f"{shell}: the shell answers after record {i}: {output[-600:]}")
        expected = {"PATH": START_PATH, "EDITOR": "vim", "CUDA_HOME": "/opt/vendor-cuda",
                    "CUDACXX": "/opt/vendor-cuda/bin/nvcc", "LD_PRELOAD": None, "BASH_ENV": None, "CUDAENV_DIFF": None}
        for step in ["start"] + [f"after {i}" for i in range(1, len(crafted))]:
            check(seen.get(step) == expected, f"{shell}: {step}: nothing changes and the record goes:\n"
                                              f"{seen.get(step)}\nvs\n{expected}")
        notices = [line for line in output.splitlines() if "CUDAENV_DIFF was not written by cudaenv" in line]
        check(len(notices) == len(crafted) - 3, f"{shell}: one notice per rejected record: {output[-2000:]}")
        check(not [line for line in notices if "touch" in line or "evil" in line or "vim" in line],
              f"{shell}: a notice does not repeat the record: {notices}")


@case
def an_honest_record_still_restores_exactly(tmp):
    from harness import install_synthetic_toolkits
    env = install_synthetic_toolkits(tmp)
    env = dict(env, CUDA_HOME="/opt/vendor-cuda", CUDA_PATH="", EDITOR="vim", PATH=START_PATH)
    project = tmp / "p"
    project.mkdir()
    (project / ".cudaenv").write_text("12.4\n")
    names = SEEN + ["CUDA_PATH", "LD_LIBRARY_PATH"]
    for shell in SHELLS:
        lines = show(shell, "before", names) + [f"cd {quote(shell, str(project))}"] + show(shell, "in", names)
        lines += ["cd /"] + show(shell, "left", names)
        proc = run_shell(shell, tmp, env, lines)
        seen = steps(proc.stdout, names)
        check(seen.get("in", {}).get("CUDA_HOME") == f"{tmp}/root/toolkits/12.4.1", f"{shell}: activates: {seen}")
        check(seen.get("left") == seen.get("before") and seen.get("before"), f"{shell}: exact round trip: {seen}")
        check("was not written by cudaenv" not in proc.stderr, f"{shell}: no notice for cudaenv's own record: {proc.stderr}")


if not SHELLS:
    raise SystemExit(SKIP)
finish()
