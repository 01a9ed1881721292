"""CUDAHOSTCXX when needed: activating a toolkit whose include/crt/host_config.h refuses the
default `c++` (a GCC newer than it accepts) sets CUDAHOSTCXX to the newest g++-N on PATH that it
accepts, for `cudaenv exec`, `cudaenv env` and the prompt hook alike; a toolkit that accepts the
default sets nothing; the user's own CUDAHOSTCXX always stands; leaving unsets what cudaenv set;
a project's host_compiler pin that is not installed is warned about, once per activation."""

import json
import subprocess

from harness import BINARY, case, check, clean_env, finish, mirror_server, run
from synthetic_mirror import nvcc_script, write_release

# Two releases as NVIDIA ships their GCC check: CUDA 12.1 accepts GCC <= 12, 12.4 GCC <= 13.
NEWEST_GCC = {"12.1.1": ("12.1.105", 12), "12.4.1": ("12.4.131", 13)}


def host_config(newest):
    return f"#if defined(__GNUC__)\n#if __GNUC__ > {newest}\n#error -- unsupported GNU version!\n#endif\n#endif\n"


def setup(tmp, default="g++-13"):
    for release, (nvcc, newest) in NEWEST_GCC.items():
        write_release(tmp / "mirror", release, {
            "cuda_nvcc": (nvcc, [("bin/nvcc", nvcc_script(release, nvcc), 0o755)], 0),
            "cuda_crt": (nvcc, [("include/crt/host_config.h", host_config(newest), 0o644)], 0),
        })
    # Compilers as Debian installs them: versioned drivers, and c++ a link to the default one.
    bindir = tmp / "compilers"
    bindir.mkdir()
    for name in ("g++-11", "g++-12", "g++-13"):
        (bindir / name).write_text("#!/bin/sh\nexit 0\n")
        (bindir / name).chmod(0o755)
    (bindir / "c++").symlink_to(bindir / default)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", PATH=f"{bindir}:/usr/bin:/bin")
    with mirror_server(tmp / "mirror") as (url, _):
        for release in NEWEST_GCC:
            run(["install", release, "--mirror", url], env, check_exit=0)
    projects = {}
    for release in NEWEST_GCC:
        project = tmp / f"project-{release}"
        project.mkdir()
        (project / ".cudaenv").write_text(f'cuda = "{release}"\n')
        projects[release] = project
    return env, bindir, projects


def in_project(args, env, project):
    return subprocess.run([BINARY, *args], env=env, cwd=project, capture_output=True, text=True, timeout=60)


@case
def a_toolkit_that_refuses_the_default_gcc_gets_one_it_accepts(tmp):
    env, bindir, projects = setup(tmp)
    old = in_project(["exec", "--", "printenv", "CUDAHOSTCXX"], env, projects["12.1.1"])
    check(old.stdout.strip() == str(bindir / "g++-12"),
          f"CUDA 12.1 with gcc 13 as c++: CUDAHOSTCXX is g++-12: {old.stdout!r} {old.stderr!r}")
    new = in_project(["exec", "--", "printenv", "CUDAHOSTCXX"], env, projects["12.4.1"])
    check(new.returncode == 1 and new.stdout == "", f"CUDA 12.4 accepts gcc 13: no CUDAHOSTCXX: {new.stdout!r}")
    data = json.loads(in_project(["env", "--shell", "json"], env, projects["12.1.1"]).stdout)
    check(data.get("CUDAHOSTCXX") == str(bindir / "g++-12"), f"env --shell json names it: {data}")


@case
def doctor_judges_the_compiler_activation_chose(tmp):
    """doctor's host-compiler check reads activation's choice for the project's toolkit, hook
    or no hook: g++-12 for CUDA 12.1 where c++ is gcc 13."""
    env, bindir, projects = setup(tmp)
    proc = in_project(["doctor", "--json"], env, projects["12.1.1"])
    report = json.loads(proc.stdout)
    host = next(f for f in report["findings"] if f["id"] == "host-compiler")
    check(any(line.startswith(f"activation hands nvcc {bindir / 'g++-12'}: ") for line in host["evidence"]),
          f"doctor names activation's g++-12: {host}")


@case
def the_users_own_choice_stands_and_a_supported_default_needs_nothing(tmp):
    env, _, projects = setup(tmp)
    own = in_project(["exec", "--", "printenv", "CUDAHOSTCXX"], dict(env, CUDAHOSTCXX="/opt/gcc-10/bin/g++"),
                     projects["12.1.1"])
    check(own.stdout.strip() == "/opt/gcc-10/bin/g++", f"the user's CUDAHOSTCXX is kept: {own.stdout!r}")
    (tmp / "compilers" / "c++").unlink()
    (tmp / "compilers" / "c++").symlink_to(tmp / "compilers" / "g++-11")
    fine = in_project(["exec", "--", "printenv", "CUDAHOSTCXX"], env, projects["12.1.1"])
    check(fine.stdout == "", f"gcc 11 as c++ suits CUDA 12.1: nothing set: {fine.stdout!r}")


SESSION = """eval "$(cudaenv init bash)"
show() { printf '%s\\n' "${CUDAHOSTCXX-unset}"; }
cd "$OLD"; __cudaenv_hook; show
cd "$NEW"; __cudaenv_hook; show
cd "$OLD"; __cudaenv_hook; show
cd /; __cudaenv_hook; show
"""


@case
def the_hook_sets_it_on_enter_and_unsets_it_on_leave(tmp):
    env, bindir, projects = setup(tmp)
    (tmp / "bin").mkdir()
    (tmp / "bin" / "cudaenv").symlink_to(BINARY)
    session_env = dict(env, PATH=f"{tmp}/bin:{env['PATH']}", OLD=str(projects["12.1.1"]), NEW=str(projects["12.4.1"]))
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", SESSION], env=session_env, capture_output=True,
                          text=True, timeout=60)
    expected = [str(bindir / "g++-12"), "unset", str(bindir / "g++-12"), "unset"]
    check(proc.stdout.split() == expected, f"enter 12.1, switch to 12.4, back, leave: {proc.stdout!r} {proc.stderr!r}")


PIN_SESSION = """eval "$(cudaenv init bash)"
cd "$OLD"; __cudaenv_hook; cd /; __cudaenv_hook; cd "$OLD"; __cudaenv_hook
"""


@case
def a_pin_to_an_absent_compiler_is_warned_about_once_per_activation(tmp):
    env, bindir, projects = setup(tmp)
    project_file = projects["12.1.1"] / ".cudaenv"
    project_file.write_text('cuda = "12.1.1"\nhost_compiler = "g++-99"\n')
    expected = (f'{project_file}: host_compiler = "g++-99" is not on PATH, so nvcc and CMake keep their '
                'default compiler; install it (sudo apt install g++-99) or change host_compiler there')
    for args in (["exec", "--", "true"], ["env", "--shell", "json"], ["env", "--shell", "bash"]):
        proc = in_project(args, env, projects["12.1.1"])
        check(proc.returncode == 0 and proc.stderr.count(expected) == 1,
              f"{' '.join(args)} warns once, naming the file and the fix: {proc.returncode} {proc.stderr!r}")
    (tmp / "bin").mkdir()
    (tmp / "bin" / "cudaenv").symlink_to(BINARY)
    session_env = dict(env, PATH=f"{tmp}/bin:{env['PATH']}", OLD=str(projects["12.1.1"]))
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", PIN_SESSION], env=session_env,
                          capture_output=True, text=True, timeout=60)
    check(proc.stderr.count("host_compiler = \"g++-99\" is not on PATH") == 1,
          f"the hook says it once, not at every entry: {proc.stderr!r}")
    project_file.write_text('cuda = "12.1.1"\nhost_compiler = "g++-11"\n')
    found = in_project(["exec", "--", "printenv", "CUDAHOSTCXX"], env, projects["12.1.1"])
    check(found.stdout.strip() == str(bindir / "g++-11") and "warning" not in found.stderr,
          f"a pin that is installed is used, with no warning: {found.stdout!r} {found.stderr!r}")


finish()
