"""`use cudaenv` in a direnv .envrc (shell/cudaenv.direnvrc), with the real direnv: `direnv exec`
gives each project its own toolkit, a bash session cd-ing between two projects pinned to
different toolkits gets each one's variables and never both, leaving restores the environment,
an edited .cudaenv reloads, and nothing from a .cudaenv, a spec or a path runs as code."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import BINARY, SKIP, case, check, finish, install_synthetic_toolkits

SNIPPET = Path(__file__).resolve().parents[2] / "shell" / "cudaenv.direnvrc"
DIRENV = shutil.which("direnv")
if not DIRENV:
    print("skip: direnv is not installed")
    sys.exit(SKIP)


# Two toolkits, installed once with `cudaenv install` from a synthetic mirror; each case copies them.
_STORE = Path(tempfile.mkdtemp(prefix="cudaenv-direnv-store-"))
atexit.register(shutil.rmtree, _STORE, ignore_errors=True)
_BASE = install_synthetic_toolkits(_STORE)


def installed(tmp, root=None):
    """A clean environment whose CUDAENV_ROOT (`root`, default tmp/root) holds 12.1.1 and 12.4.1."""
    root = root or tmp / "root"
    shutil.copytree(_STORE / "root", root, symlinks=True)
    return dict(_BASE, HOME=str(tmp), CUDAENV_ROOT=str(root))


def direnv_env(tmp, env):
    """`cudaenv` on PATH (a link to the binary under test) and a direnvrc that loads the snippet."""
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "cudaenv").symlink_to(BINARY)
    config = tmp / ".config"
    (config / "direnv").mkdir(parents=True)
    (config / "direnv" / "direnvrc").write_text(f'source "{SNIPPET}"\n')
    return dict(env, PATH=f"{bindir}:/usr/bin:/bin", XDG_CONFIG_HOME=str(config),
                XDG_DATA_HOME=str(tmp / ".data"), DIRENV_LOG_FORMAT="direnv: %s")


def project(tmp, name, envrc, cudaenv=None):
    directory = tmp / name
    directory.mkdir()
    (directory / ".envrc").write_text(envrc)
    if cudaenv is not None:
        (directory / ".cudaenv").write_text(cudaenv)
    return directory


def direnv(args, env, cwd=None):
    return subprocess.run([DIRENV, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def setup(tmp):
    env = direnv_env(tmp, installed(tmp))
    old = project(tmp, "old", "use cudaenv\n", 'cuda = "12.1"\n')
    new = project(tmp, "new", "use cudaenv 12.4\n")
    for directory in (old, new):
        check(direnv(["allow", str(directory)], env).returncode == 0, f"direnv allow {directory}")
    return env, old, new


@case
def direnv_exec_gives_each_project_its_own_toolkit(tmp):
    env, old, new = setup(tmp)
    home = direnv(["exec", str(old), "printenv", "CUDA_HOME"], env)
    check(home.stdout.strip() == str(tmp / "root" / "toolkits" / "12.1.1"),
          f"the .cudaenv's 12.1 applies: {home.stdout!r} {home.stderr!r}")
    nvcc = direnv(["exec", str(new), "nvcc", "--version"], env)
    check("V12.4.131" in nvcc.stdout, f"`use cudaenv 12.4` puts 12.4's nvcc first: {nvcc.stdout!r} {nvcc.stderr!r}")
    for name, expected in (("CUDAToolkit_ROOT", "12.4.1"), ("CUDACXX", "12.4.1/bin/nvcc"),
                           ("CUDAENV_ACTIVE", "12.4.1")):
        value = direnv(["exec", str(new), "printenv", name], env).stdout.strip()
        check(value.endswith(expected), f"{name} for CMake: {value!r}")


SESSION = """
show() { printf '%s|%s|%s\\n' "${CUDA_HOME-unset}" "$PATH" "${CUDAENV_ACTIVE-unset}"; }
enter() { cd "$1" && eval "$(direnv export bash 2>/dev/null)" && show; }
show
enter "$OLD"
enter "$NEW"
enter "$OLD"
enter "$HOME"
"""


@case
def cd_between_projects_switches_toolkits_and_leaving_restores(tmp):
    env, old, new = setup(tmp)
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", SESSION], env=dict(env, OLD=str(old), NEW=str(new)),
                          capture_output=True, text=True, timeout=60)
    states = [line.split("|") for line in proc.stdout.splitlines()]
    check(len(states) == 5, f"five states: {proc.stdout!r} {proc.stderr!r}")
    if len(states) != 5:
        return
    toolkits = tmp / "root" / "toolkits"
    start, in_old, in_new, back_in_old, outside = states
    for state, release in ((in_old, "12.1.1"), (in_new, "12.4.1"), (back_in_old, "12.1.1")):
        other = "12.4.1" if release == "12.1.1" else "12.1.1"
        check(state[0] == str(toolkits / release), f"CUDA_HOME is {release}'s: {state}")
        check(state[1].split(":")[0] == str(toolkits / release / "bin"), f"{release}'s bin first on PATH: {state}")
        check(str(toolkits / other) not in state[1], f"{other} is not stacked under {release}: {state}")
        check(state[2] == release, f"CUDAENV_ACTIVE={release}: {state}")
    check(outside == start, f"leaving restores PATH and unsets CUDA_HOME: {start} -> {outside}")


@case
def an_edited_cudaenv_reloads(tmp):
    env, old, _ = setup(tmp)
    session = ('cd "$OLD"; eval "$(direnv export bash 2>/dev/null)"; echo "$CUDA_HOME"\n'
               "printf 'cuda = \"12.4\"\\n' > .cudaenv; touch -d '+2 seconds' .cudaenv\n"
               'eval "$(direnv export bash 2>/dev/null)"; echo "$CUDA_HOME"\n')
    proc = subprocess.run(["bash", "--norc", "-c", session], env=dict(env, OLD=str(old)), capture_output=True,
                          text=True, timeout=60)
    homes = proc.stdout.split()
    toolkits = tmp / "root" / "toolkits"
    check(homes == [str(toolkits / "12.1.1"), str(toolkits / "12.4.1")],
          f"the edit to .cudaenv is picked up at the next prompt: {homes} {proc.stderr!r}")


@case
def nothing_read_runs_as_code(tmp):
    # A data root whose path holds quotes and $(…): every value must reach bash as data.
    root = tmp / "it's $(touch pwned-root) `touch pwned-tick`"
    env = direnv_env(tmp, installed(tmp, root))
    quoted = project(tmp, "quoted", "use cudaenv\n", 'cuda = "12.4"\n')
    hostile = project(tmp, "hostile", "use cudaenv\n", 'cuda = "$(touch pwned-file)"\n')
    spec = project(tmp, "spec", "use cudaenv '12.4; touch pwned-spec'\n")
    for directory in (quoted, hostile, spec):
        direnv(["allow", str(directory)], env)
    home = direnv(["exec", str(quoted), "printenv", "CUDA_HOME"], env)
    check(home.stdout.strip() == str(root / "toolkits" / "12.4.1"), f"the literal path: {home.stdout!r} {home.stderr!r}")
    bad = direnv(["exec", str(hostile), "printenv", "CUDA_HOME"], env)
    check(bad.returncode != 0 or bad.stdout.strip() == "", f"a malformed .cudaenv selects nothing: {bad.stdout!r}")
    check("use cudaenv" in bad.stderr and ".cudaenv" in bad.stderr, f"the error names the file: {bad.stderr!r}")
    bad_spec = direnv(["exec", str(spec), "printenv", "CUDA_HOME"], env)
    check(bad_spec.stdout.strip() == "", f"a malformed spec selects nothing: {bad_spec.stdout!r}")
    planted = [p.name for p in tmp.rglob("pwned*")] + [p.name for p in Path(os.getcwd()).glob("pwned*")]
    check(planted == [], f"nothing ran: {planted}")


finish()
