"""The wheel (scripts/wheel, from the release bundle) installs with the Python tools engineers use
and runs from where they put it, with no Python on the way: `pip install` into a fresh virtualenv,
`uv tool install` into a fresh tool directory and `pipx install` into a fresh PIPX_HOME (uv and
pipx from PyPI, installed into throwaway virtualenvs; their wheels cached under
CUDAENV_TEST_CACHE). From each: the command on PATH is the front
program itself (an ELF file, not a console-script wrapper), `--version` and `info` work, `init
bash` names the installed shim program, an interactive bash with the hook activates a pinned
toolkit, the toolkit's shim runs its nvcc, and strace sees no Python started by the command, the
hook or the shim; man finds the page after pip and pipx. Uninstalling removes every file. The wheel's platform tag is the one its files
need (their newest GLIBC_ symbol version; auditwheel from PyPI agrees) and RECORD lists every
file with its hash.

CUDAENV_WHEEL names the wheel; scripts/test builds it (scripts/wheel) and runs this file with it
set. Without it, the test is skipped."""

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from harness import SKIP, case, check, clean_env, finish, mirror_server
from module_engines import engines_required
from synthetic_mirror import toolkit_release

WHEEL = os.environ.get("CUDAENV_WHEEL", "")
CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE") or Path.home() / ".cache/cudaenv-ci/downloads")
UV_VERSION = "0.9.5"
PIPX_VERSION = "1.18.4"
PIPX_PIP = "pip==26.3"  # what pipx puts in its shared environment (it asks for pip >= 26.1)
AUDITWHEEL_VERSION = "6.8.2"  # the manylinux policy's own checker
SYSTEM_PATH = "/usr/bin:/bin"
ROOT = Path(__file__).resolve().parents[2]

if not WHEEL:
    print("skipped: CUDAENV_WHEEL is not set (scripts/test builds the wheel and sets it)")
    sys.exit(SKIP)


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def make_venv(path):
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=180)
    return path


_TOOLS = {}


def tool_from_pypi(tmp, name, version, also=()):
    """The bin/ directory of a throwaway virtualenv holding NAME==VERSION from PyPI with its
    dependencies; the wheels (and those of the requirements `also` names, which the tool itself
    installs later) are downloaded once into CUDAENV_TEST_CACHE/NAME. None when they cannot be
    had."""
    if name in _TOOLS:
        return _TOOLS[name]
    cache = CACHE / name
    requirement = f"{name}=={version}"
    if not list(cache.glob(f"{name}-{version}-*.whl")):
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--dest", str(cache),
                        requirement, *also], capture_output=True, timeout=300)
    # A virtualenv without its own pip, filled by this Python's pip: ensurepip would cost a
    # dozen seconds per tool on a loaded machine, and the tools do not need pip.
    venv = tmp / f"{name}-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                   timeout=180)
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin/python"), "install",
                                "--no-index", "--find-links", str(cache), requirement], capture_output=True, timeout=300)
    _TOOLS[name] = venv / "bin" if installed.returncode == 0 else None
    return _TOOLS[name]


def started_programs(argv, env, cwd):
    """The programs `argv` and its children exec, as strace sees them; None without strace."""
    if not shutil.which("strace"):
        return None
    log = Path(cwd) / "execve.log"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(log), *argv], env=env, cwd=cwd,
                   capture_output=True, timeout=60)
    return re.findall(r'execve\("([^"]+)"', log.read_text())


def no_python_runs(argv, env, cwd, what):
    programs = started_programs(argv, env, cwd)
    if programs is None:
        print(f"skip part: no strace to watch {what}")
        return
    check(programs and not any("python" in Path(p).name for p in programs),
          f"{what} starts no Python: {programs}")


def in_bash(env, cwd, rc, session):
    """An interactive bash whose rc file is `rc`, fed `session` on its input."""
    (Path(env["HOME"]) / ".bashrc").write_text(rc)
    proc = subprocess.run(["bash", "-i"], input=session, env=dict(env, TERM="dumb"), cwd=cwd,
                          capture_output=True, text=True, timeout=60)
    return proc.stdout + proc.stderr


def works_from(tmp, command, prefix):
    """`command` (the cudaenv an installer put on PATH) runs from there: its companions are the
    ones under `prefix` (the environment it was installed into)."""
    prefix = Path(prefix).resolve()
    check(command.exists() and is_elf(command.resolve()),
          f"{command} is the program itself, not a Python wrapper")
    env = clean_env(tmp / "home", CUDAENV_ROOT=tmp / "data", PATH=f"{command.parent}:{SYSTEM_PATH}")
    (tmp / "home").mkdir(exist_ok=True)

    def cudaenv(*args, cwd=tmp):
        return subprocess.run(["cudaenv", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)

    version = cudaenv("--version")
    check(version.returncode == 0 and re.fullmatch(r"cudaenv \d+\.\d+\.\d+\S*\n", version.stdout),
          f"--version: {version.stdout!r} {version.stderr!r}")
    info = cudaenv("info")
    check(info.returncode == 0 and "error" not in info.stderr, f"info: {info.stdout}{info.stderr}")
    shim_program = prefix / "libexec/cudaenv/cudaenv-shim"
    hook = cudaenv("init", "bash")
    check(f"__cudaenv_bin='{shim_program}'" in hook.stdout, f"init bash calls the installed shim program: {hook.stdout[:600]}")

    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, _):
        installed = cudaenv("install", "12.4", "--mirror", url)
    check(installed.returncode == 0, f"install from the loopback mirror: {installed.stderr}")
    project = tmp / "project"
    project.mkdir()
    used = cudaenv("use", "12.4", cwd=project)
    check(used.returncode == 0 and (project / ".cudaenv").is_file(), f"use pins the project: {used.stderr}")

    shim = tmp / "data/shims/nvcc"
    check(shim.is_symlink() and shim.resolve() == shim_program.resolve(),
          f"the nvcc shim is the installed shim program: {shim} -> {shim.resolve() if shim.exists() else None}")
    called = subprocess.run([str(shim), "--version"], env=env, cwd=project, capture_output=True, text=True, timeout=60)
    check(called.returncode == 0 and "V12.4.131" in called.stdout, f"the shim runs the pinned nvcc: {called.stdout}{called.stderr}")

    session = in_bash(env, tmp, 'eval "$(cudaenv init bash)"\n',
                      f'cd {project}\necho "active=$CUDAENV_ACTIVE"\nnvcc --version\nexit\n')
    check("active=12.4.1" in session and "V12.4.131" in session, f"the bash hook activates the pin:\n{session}")

    no_python_runs(["cudaenv", "--version"], env, tmp, "the command")
    no_python_runs([str(shim_program), "hook-env", "--shell", "bash"], env, project, "the prompt hook")
    no_python_runs([str(shim), "--version"], env, project, "the shim")


def files_of(prefix):
    return sorted(str(p.relative_to(prefix)) for p in Path(prefix).rglob("*") if "cudaenv" in str(p.relative_to(prefix)))


@case
def the_wheel_is_tagged_for_the_glibc_its_files_need_and_records_every_file(tmp):
    name = Path(WHEEL).name
    match = re.fullmatch(r"cudaenv-(\d+\.\d+\.\d+[^-]*)-py3-none-manylinux_2_(\d+)_x86_64\.whl", name)
    check(match, f"the wheel's name: {name}")
    with zipfile.ZipFile(WHEEL) as wheel:
        names = wheel.namelist()
        version = match.group(1) if match else ""
        info = f"cudaenv-{version}.dist-info"
        record = list(csv.reader(io.StringIO(wheel.read(f"{info}/RECORD").decode())))
        listed = {row[0]: row[1:] for row in record}
        check(sorted(listed) == sorted(names), f"RECORD lists exactly the wheel's files: {sorted(set(listed) ^ set(names))}")
        for member in names:
            if member == f"{info}/RECORD":
                continue
            content = wheel.read(member)
            digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
            check(listed.get(member) == [digest, str(len(content))], f"RECORD's hash and size of {member}")
        check(f"Tag: py3-none-manylinux_2_{match.group(2) if match else ''}_x86_64" in wheel.read(f"{info}/WHEEL").decode(),
              "WHEEL names the tag the file name carries")
        data = f"cudaenv-{version}.data"
        scripts = [n for n in names if n.startswith(f"{data}/scripts/")]
        check(scripts == [f"{data}/scripts/cudaenv"], f"one command, the front program: {scripts}")
        for member in (f"{data}/data/libexec/cudaenv/cudaenv-full", f"{data}/data/libexec/cudaenv/cudaenv-shim",
                       f"{data}/data/share/man/man1/cudaenv.1", f"{data}/data/share/bash-completion/completions/cudaenv",
                       f"{data}/data/share/cudaenv/cudaenv.bash"):
            check(member in names, f"{member} is in the wheel")
        check(any(n.startswith(f"{data}/data/lib/cudaenv/libcurl.so") for n in names), "libcurl travels in the wheel")
        newest = (2, 17)
        wheel.extractall(tmp / "files")
    for path in (tmp / "files").rglob("*"):
        if path.is_file() and is_elf(path):
            dump = subprocess.run(["objdump", "-p", str(path)], capture_output=True, text=True, check=True).stdout
            references = dump.split("Version References:", 1)[1] if "Version References:" in dump else ""
            newest = max([newest, *((2, int(m)) for m in re.findall(r"\bGLIBC_2\.(\d+)", references))])
    check(match and int(match.group(2)) == newest[1], f"the tag's glibc is the newest any file needs: 2.{newest[1]}")
    auditwheel = tool_from_pypi(tmp, "auditwheel", AUDITWHEEL_VERSION)
    if auditwheel is None:
        check(not engines_required(), f"auditwheel {AUDITWHEEL_VERSION} could not be had, and CUDAENV_REQUIRE_ENGINES=1")
        print("skip part: auditwheel could not be had")
        return
    shown = subprocess.run([str(auditwheel / "auditwheel"), "show", WHEEL], capture_output=True, text=True, timeout=300)
    verdict = " ".join(shown.stdout.split())
    tag = f"manylinux_2_{newest[1]}_x86_64"
    check(shown.returncode == 0 and f'is consistent with the following platform tag: "{tag}"' in verdict,
          f"auditwheel show agrees the wheel is {tag}: {shown.stdout}{shown.stderr}")


@case
def a_program_loading_a_library_the_wheel_may_not_take_from_the_system_stops_the_build(tmp):
    # /bin/ls loads libselinux, which is neither in the bundle nor one of the manylinux policy's
    # system libraries: a wheel holding it would fail to start where libselinux is missing.
    if "libselinux.so.1" not in subprocess.run(["objdump", "-p", "/bin/ls"], capture_output=True, text=True).stdout:
        print("skip: /bin/ls here does not load libselinux")
        return
    top = tmp / "cudaenv-0.1.0-linux-x86_64"
    for where in ("bin", "libexec/cudaenv", "share/doc/cudaenv"):
        (top / where).mkdir(parents=True)
    with zipfile.ZipFile(WHEEL) as wheel:
        front = next(n for n in wheel.namelist() if n.endswith(".data/scripts/cudaenv"))
        (top / "bin/cudaenv").write_bytes(wheel.read(front))
    shutil.copy("/bin/ls", top / "libexec/cudaenv/cudaenv-full")
    (top / "share/doc/cudaenv/LICENSE").write_text("MIT\n")
    bundle = tmp / "cudaenv-0.1.0-linux-x86_64.tar.gz"
    subprocess.run(["tar", "-czf", str(bundle), "-C", str(tmp), top.name], check=True)
    made = subprocess.run([str(ROOT / "scripts/wheel"), "--bundle", str(bundle), "--output", str(tmp / "out")],
                          capture_output=True, text=True, timeout=120)
    check(made.returncode != 0 and "libexec/cudaenv/cudaenv-full loads libselinux.so.1" in made.stderr,
          f"scripts/wheel refuses, naming the file and the library: {made.returncode} {made.stderr}")
    check(not list((tmp / "out").glob("*.whl")), "no wheel is written")


@case
def pip_install_into_a_fresh_virtualenv_runs_the_real_binaries(tmp):
    venv = make_venv(tmp / "venv")
    pip = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "--no-index", WHEEL],
                         capture_output=True, text=True, timeout=300)
    check(pip.returncode == 0, f"pip install: {pip.stdout}{pip.stderr}")
    check(os.access(venv / "libexec/cudaenv/cudaenv-full", os.X_OK), "the full program is executable in the venv")
    works_from(tmp, venv / "bin/cudaenv", venv)
    if shutil.which("man"):
        # man-db derives its search path from PATH: <env>/bin gives <env>/share/man
        page = subprocess.run(["man", "-w", "cudaenv"], env=clean_env(tmp / "home", PATH=f"{venv}/bin:{SYSTEM_PATH}"),
                              capture_output=True, text=True, timeout=60)
        check(page.stdout.strip() == str(venv / "share/man/man1/cudaenv.1"),
              f"man finds the page with the virtualenv's bin/ on PATH: {page.stdout}{page.stderr}")
    else:
        print("skip part: no man to look the page up")
    removed = subprocess.run([str(venv / "bin/python"), "-m", "pip", "uninstall", "-y", "cudaenv"],
                             capture_output=True, text=True, timeout=300)
    check(removed.returncode == 0, f"pip uninstall: {removed.stderr}")
    left = [f for f in files_of(venv) if (venv / f).is_file()]
    check(not left, f"pip uninstall removes every file: {left}")


@case
def uv_tool_install_puts_a_working_cudaenv_on_the_tool_bin_dir(tmp):
    uv = tool_from_pypi(tmp, "uv", UV_VERSION)
    if uv is None:
        check(not engines_required(), f"uv {UV_VERSION} could not be had from PyPI, and CUDAENV_REQUIRE_ENGINES=1")
        print("skip: uv could not be had")
        return
    env = clean_env(tmp, UV_TOOL_DIR=tmp / "tools", UV_TOOL_BIN_DIR=tmp / "bin", UV_CACHE_DIR=tmp / "uv-cache",
                    UV_PYTHON_DOWNLOADS="never", UV_NO_CONFIG="1", PATH=f"{uv}:{SYSTEM_PATH}")
    installed = subprocess.run([str(uv / "uv"), "tool", "install", "--offline", "--python", sys.executable, WHEEL],
                               env=env, capture_output=True, text=True, timeout=300)
    check(installed.returncode == 0, f"uv tool install: {installed.stdout}{installed.stderr}")
    listed = subprocess.run([str(uv / "uv"), "tool", "list"], env=env, capture_output=True, text=True, timeout=60)
    check(re.search(r"^cudaenv v\S+\n- cudaenv$", listed.stdout, re.M), f"uv tool list: {listed.stdout}{listed.stderr}")
    works_from(tmp, tmp / "bin/cudaenv", tmp / "tools/cudaenv")
    removed = subprocess.run([str(uv / "uv"), "tool", "uninstall", "cudaenv"], env=env, capture_output=True,
                             text=True, timeout=60)
    check(removed.returncode == 0 and not (tmp / "bin/cudaenv").exists() and not (tmp / "tools/cudaenv").exists(),
          f"uv tool uninstall removes the command and the tool's environment: {removed.stderr}")



@case
def pipx_install_links_the_program_and_its_man_page(tmp):
    pipx = tool_from_pypi(tmp, "pipx", PIPX_VERSION, also=(PIPX_PIP,))
    if pipx is None:
        check(not engines_required(), f"pipx {PIPX_VERSION} could not be had from PyPI, and CUDAENV_REQUIRE_ENGINES=1")
        print("skip: pipx could not be had")
        return
    # pipx's default layout, below tmp instead of ~/.local: bin/ and share/man beside it
    env = clean_env(tmp / "home", PIPX_HOME=tmp / "pipx", PIPX_BIN_DIR=tmp / "bin", PIPX_MAN_DIR=tmp / "share/man",
                    PIP_NO_INDEX="1", PIP_FIND_LINKS=CACHE / "pipx", PATH=f"{pipx}:{SYSTEM_PATH}")
    (tmp / "home").mkdir()
    installed = subprocess.run([str(pipx / "pipx"), "install", "--python", sys.executable, WHEEL], env=env,
                               capture_output=True, text=True, timeout=300)
    check(installed.returncode == 0, f"pipx install: {installed.stdout}{installed.stderr}")
    works_from(tmp, tmp / "bin/cudaenv", tmp / "pipx/venvs/cudaenv")
    if shutil.which("man"):
        page = subprocess.run(["man", "-w", "cudaenv"], env=clean_env(tmp / "home", PATH=f"{tmp}/bin:{SYSTEM_PATH}"),
                              capture_output=True, text=True, timeout=60)
        check(Path(page.stdout.strip()).resolve() == (tmp / "pipx/venvs/cudaenv/share/man/man1/cudaenv.1").resolve(),
              f"man finds the page pipx linked beside its bin/: {page.stdout}{page.stderr}")
    removed = subprocess.run([str(pipx / "pipx"), "uninstall", "cudaenv"], env=env, capture_output=True, text=True,
                             timeout=60)
    check(removed.returncode == 0 and not (tmp / "bin/cudaenv").exists() and not (tmp / "pipx/venvs/cudaenv").exists(),
          f"pipx uninstall removes the command and its environment: {removed.stderr}")


finish()
