"""The prompt hook in real bash, zsh and fish processes: entering a project activates its toolkit,
a nested project switches without stacking, leaving restores every variable exactly, the user's own
PATH edits survive, and nothing read from a .cudaenv or a directory name can run a command."""

import os
import shutil
from pathlib import Path

from harness import BINARY, SKIP, case, check, finish, install_synthetic_toolkits
from shells import SHELLS, prepend_path, quote, run_shell, show, steps

def projects(tmp):
    a = tmp / "proj-a"
    b = a / "nested-b"
    b.mkdir(parents=True)
    (a / ".cudaenv").write_text('cuda = "12.1"\n')
    (b / ".cudaenv").write_text("12.4\n")
    return a, b


def user_environment(env):
    # Set, empty and unset variables, so that leaving must restore each kind exactly.
    env = dict(env, CUDA_HOME="/opt/vendor-cuda", CUDA_PATH="", PATH="/usr/local/bin:/usr/bin:/bin")
    env.pop("LD_LIBRARY_PATH", None)
    return env


@case
def entering_switching_and_leaving_projects(tmp):
    env = user_environment(install_synthetic_toolkits(tmp))
    a, b = projects(tmp)
    root = tmp / "root" / "toolkits"
    for shell in SHELLS:
        lines = show(shell, "before")
        lines += [f"cd {quote(shell, str(a))}"] + show(shell, "in A") + ["nvcc --version"]
        lines += [f"cd {quote(shell, str(b))}"] + show(shell, "in B") + ["nvcc --version"]
        lines += [prepend_path(shell, "/user/added")]
        lines += ["cd /"] + show(shell, "left")
        proc = run_shell(shell, tmp, env, lines)
        seen = steps(proc.stdout)
        check("end" in seen, f"{shell}: the script ran to the end: {proc.stdout}\n{proc.stderr}")
        before, in_a, in_b, left = (seen.get(s, {}) for s in ("before", "in A", "in B", "left"))
        check(in_a.get("CUDA_HOME") == f"{root}/12.1.1", f"{shell}: A activates 12.1.1: {in_a}")
        check(in_a.get("CUDAENV_ACTIVE") == "12.1.1", f"{shell}: CUDAENV_ACTIVE in A: {in_a}")
        check(in_a.get("CUDACXX") == f"{root}/12.1.1/bin/nvcc", f"{shell}: CUDACXX in A: {in_a}")
        check(in_a.get("PATH", "").startswith(f"{root}/12.1.1/bin:"), f"{shell}: A's bin first: {in_a}")
        check(in_a.get("LD_LIBRARY_PATH") == f"{root}/12.1.1/lib64", f"{shell}: A's lib64: {in_a}")
        check("release 12.1, V12.1.105" in proc.stdout, f"{shell}: nvcc in A is A's: {proc.stdout}")
        check(in_b.get("CUDAENV_ACTIVE") == "12.4.1", f"{shell}: nested B switches to 12.4.1: {in_b}")
        check("12.1.1" not in str(in_b), f"{shell}: no trace of A in B: {in_b}")
        check(in_b.get("PATH") == f"{root}/12.4.1/bin:/usr/local/bin:/usr/bin:/bin", f"{shell}: B's PATH: {in_b}")
        check("release 12.4, V12.4.131" in proc.stdout, f"{shell}: nvcc in B is B's: {proc.stdout}")
        expected = dict(before, PATH="/user/added:" + before.get("PATH", ""))
        check(left == expected, f"{shell}: leaving restores exactly (user's entry kept):\n{left}\nvs\n{expected}")
        check(before.get("CUDA_PATH") == "" and before.get("LD_LIBRARY_PATH", "x") is None,
              f"{shell}: the starting state has an empty and an unset variable: {before}")
        check(proc.stderr.count("cudaenv:") == 0, f"{shell}: no complaints: {proc.stderr}")


@case
def edits_and_cudaenv_version_apply_at_the_next_prompt_and_nothing_else_starts_cudaenv(tmp):
    env = user_environment(install_synthetic_toolkits(tmp))
    a, _ = projects(tmp)
    (a / "sub").mkdir()
    os.utime(a / ".cudaenv", (1_600_000_000, 1_600_000_000))
    for shell in SHELLS:
        # A copy of cudaenv that the script replaces, once the project is active, by a program
        # that leaves a mark: any later hook call would leave it.
        bin_dir = tmp / f"bin-{shell}"
        bin_dir.mkdir()
        front = bin_dir / "cudaenv"
        shutil.copy(BINARY, front)
        for companion in ("cudaenv-full", "cudaenv-shim"):
            shutil.copy(os.path.join(os.path.dirname(BINARY), companion), bin_dir / companion)
        marker = tmp / f"called-{shell}"
        spy = bin_dir / "spy"
        spy.write_text(f"#!/bin/sh\ntouch {quote('bash', str(marker))}\n")
        spy.chmod(0o755)
        lines = [f"cd {quote(shell, str(a))}"] + show(shell, "entered")
        # (the hook runs the small cudaenv-shim program when it is installed beside cudaenv)
        programs = [front, bin_dir / "cudaenv-shim"]
        for program in programs:
            lines += [f"cp {quote(shell, str(program))} {quote(shell, str(program) + '.real')}",
                      f"cp {quote(shell, str(spy))} {quote(shell, str(program))}"]
        lines += ["cd sub", "cd ..", "echo 'id''le'", "cd sub", "true"]
        lines += [f"ls {quote(shell, str(marker))} 2>/dev/null; echo 'marker'' checked'"]
        for program in programs:
            lines += [f"cp {quote(shell, str(program) + '.real')} {quote(shell, str(program))}"]
        lines += [f"printf 'cuda = \"12.4\"\\n' > {quote(shell, str(a / '.cudaenv'))}"] + show(shell, "edited")
        lines += [("set -gx CUDAENV_VERSION 12.1" if shell == "fish" else "export CUDAENV_VERSION=12.1")]
        lines += show(shell, "forced")
        lines += [("set -e CUDAENV_VERSION" if shell == "fish" else "unset CUDAENV_VERSION")] + show(shell, "unforced")
        proc = run_shell(shell, tmp, env, lines, cudaenv=str(front))
        seen = steps(proc.stdout)
        check(seen.get("entered", {}).get("CUDAENV_ACTIVE") == "12.1.1", f"{shell}: entered: {seen.get('entered')}")
        check("marker checked" in proc.stdout and not marker.exists(),
              f"{shell}: prompts and cd inside the project started no cudaenv process")
        check(seen.get("edited", {}).get("CUDAENV_ACTIVE") == "12.4.1", f"{shell}: an edit applies: {seen.get('edited')}")
        check(seen.get("forced", {}).get("CUDAENV_ACTIVE") == "12.1.1", f"{shell}: CUDAENV_VERSION applies")
        check(seen.get("unforced", {}).get("CUDAENV_ACTIVE") == "12.4.1", f"{shell}: unsetting it applies")
        (a / ".cudaenv").write_text('cuda = "12.1"\n')
        os.utime(a / ".cudaenv", (1_600_000_000, 1_600_000_000))


@case
def a_nearer_project_file_appearing_or_going_applies_at_the_next_prompt(tmp):
    # The unchanged-prompt check remembers which directories the walk passed: a .cudaenv created
    # in one of them (or the found one removed) must still be seen at the very next prompt.
    env = user_environment(install_synthetic_toolkits(tmp))
    a, _ = projects(tmp)
    deep = a / "sub" / "deeper"
    deep.mkdir(parents=True)
    nearer = a / "sub" / ".cudaenv"
    for shell in SHELLS:
        lines = [f"cd {quote(shell, str(deep))}"] + show(shell, "outer")
        lines += [f"printf '12.4\\n' > {quote(shell, str(nearer))}"] + show(shell, "nearer")
        lines += [f"rm {quote(shell, str(nearer))}"] + show(shell, "gone")
        lines += [f"mv {quote(shell, str(a / '.cudaenv'))} {quote(shell, str(a / 'kept'))}"] + show(shell, "none")
        lines += [f"mv {quote(shell, str(a / 'kept'))} {quote(shell, str(a / '.cudaenv'))}"] + show(shell, "back")
        proc = run_shell(shell, tmp, env, lines)
        seen = {step: values.get("CUDAENV_ACTIVE") for step, values in steps(proc.stdout).items()}
        want = {"outer": "12.1.1", "nearer": "12.4.1", "gone": "12.1.1", "none": None, "back": "12.1.1"}
        check({step: seen.get(step, "missing") for step in want} == want,
              f"{shell}: each change applies at the next prompt: {seen}\n{proc.stderr}")


INJECTIONS = ["$(touch {pwned})", "`touch {pwned}`", "12.1\"; touch {pwned}; echo \"", "12.1'; touch {pwned}; echo '",
              "12.1\ntouch {pwned}", "12.1; touch {pwned}", "12.1 && touch {pwned}", "12.1\\'; touch {pwned} #"]


@case
def malformed_and_hostile_project_files_run_nothing_and_the_shell_goes_on(tmp):
    env = user_environment(install_synthetic_toolkits(tmp))
    pwned = tmp / "pwned"
    dirs = []
    for i, injection in enumerate(INJECTIONS):
        text = injection.format(pwned=pwned)
        for form, content in (("bare", text + "\n"), ("toml", f"cuda = '{text}'\n"), ("key", f"{text} = 1\n")):
            d = tmp / f"hostile-{i}-{form}"
            d.mkdir()
            (d / ".cudaenv").write_text(content)
            dirs.append(d)
    malformed = tmp / "malformed"
    malformed.mkdir()
    (malformed / ".cudaenv").write_text('# ok\ncuda = "12.1"\n[frameworks\n')
    dirs.append(malformed)
    # A directory name is untrusted too (a cloned repository's path): it holds a valid pin.
    # (no '/' can be in a name: the command would write where the shell stands, checked below)
    named = tmp / "repo $(touch cudaenv-pwned) `touch cudaenv-pwned` ' \" ; x\ny"
    named.mkdir()
    (named / ".cudaenv").write_text('cuda = "12.1"\n')
    for shell in SHELLS:
        lines = []
        for d in dirs:
            lines += [f"cd {quote(shell, str(d))}", "echo 'ali''ve'", "cd /"]
        lines += [f"cd {quote(shell, str(named))}"] + show(shell, "named") + ["cd /"] + show(shell, "after")
        proc = run_shell(shell, tmp, env, lines)
        seen = steps(proc.stdout)
        ran = [p for p in (pwned, tmp / "cudaenv-pwned", named / "cudaenv-pwned", Path("/cudaenv-pwned")) if p.exists()]
        check(not ran, f"{shell}: a hostile .cudaenv or directory name ran a command: {ran}")
        check(proc.stdout.count("alive") == len(dirs), f"{shell}: the shell kept working: {proc.stdout[-400:]}")
        check(f"{malformed}/.cudaenv:3" in proc.stderr, f"{shell}: the malformed file is named with its line: {proc.stderr}")
        # (zsh writes its prompts to stderr too, so a message may follow a prompt on its line)
        problems = proc.stderr.count("cudaenv: ")
        check(problems >= len(dirs), f"{shell}: a line for each bad file: {problems} for {len(dirs)}")
        check(seen.get("named", {}).get("CUDAENV_ACTIVE") == "12.1.1", f"{shell}: the odd path activates: {seen.get('named')}")
        check(seen.get("after", {}).get("CUDAENV_ACTIVE", "x") is None, f"{shell}: and deactivates")
        pwned.unlink(missing_ok=True)


@case
def a_toolkit_not_installed_gives_one_hint_and_no_change(tmp):
    env = user_environment(install_synthetic_toolkits(tmp))
    wants = tmp / "wants-11.8"
    wants.mkdir()
    (wants / ".cudaenv").write_text('cuda = "11.8"\n')
    for shell in SHELLS:
        proc = run_shell(shell, tmp, env, show(shell, "before") + [f"cd {quote(shell, str(wants))}", "echo 'o''ne'",
                                                                  "echo 't''wo'"] + show(shell, "inside"))
        seen = steps(proc.stdout)
        check(seen.get("inside") == seen.get("before"), f"{shell}: no change: {seen}")
        hints = [line for line in proc.stderr.splitlines() if "cudaenv install 11.8" in line]
        check(len(hints) == 1, f"{shell}: one hint, not one per prompt: {proc.stderr}")


if not SHELLS:
    raise SystemExit(SKIP)
finish()
