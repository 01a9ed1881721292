"""`cudaenv install` with no SPEC installs what the nearest .cudaenv pins (toolkit and cuDNN), as
`nvm install`, `pyenv install` and `mise install` do, from a synthetic mirror served over HTTP."""

import subprocess

from harness import BINARY, case, check, clean_env, expect_error, finish, mirror_server
from synthetic_mirror import cudnn_release, toolkit_release


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", **extra)


def archive_requests(faults):
    """Every request the mirror server answered."""
    log = faults.parent / (faults.name + ".log")
    return log.read_text().splitlines() if log.exists() else []


def entries(tmp, kind):
    directory = tmp / "root" / kind
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) if directory.exists() else []


@case
def installs_the_toolkit_and_cudnn_the_project_pins_then_says_they_are_there(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    project = tmp / "repo"
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".cudaenv").write_text('# team pin\ncuda = "12.4"\ncudnn = "9"\n')
    with mirror_server(tmp / "mirror") as (url, faults):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        # From a subdirectory: the nearest .cudaenv upward applies.
        proc = cudaenv(["install"], env, project / "src" / "deep")
        check(proc.returncode == 0, f"install exits 0: {proc.stderr}")
        check("installed CUDA 12.4.1" in proc.stdout, proc.stdout)
        check("installed cuDNN 9.1.0" in proc.stdout, proc.stdout)
        check(entries(tmp, "toolkits") == ["12.4.1"], f"only the pinned toolkit: {entries(tmp, 'toolkits')}")
        check(entries(tmp, "cudnn") == ["9.1.0-cuda12"], f"cuDNN for CUDA 12: {entries(tmp, 'cudnn')}")
        # Again: both are there, so it says so and asks the mirror nothing (it works offline).
        before = len(archive_requests(faults))
        again = cudaenv(["install"], env, project / "src")
        check(again.returncode == 0, f"second install exits 0: {again.stderr}")
        check(f"CUDA 12.4.1 is already installed in {tmp}/root/toolkits/12.4.1 ({project}/.cudaenv pins 12.4)"
              in again.stdout, again.stdout)
        check("cuDNN 9.1.0 is already installed" in again.stdout, again.stdout)
        check(len(archive_requests(faults)) == before, f"no request to the mirror: {archive_requests(faults)[before:]}")


@case
def a_bare_version_file_and_an_explicit_cudnn_flag(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    project = tmp / "p"
    project.mkdir()
    (project / ".cudaenv").write_text("12.4.1  # cluster nodes\n")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["install", "--cudnn", "9.1", "--mirror", url], env_for(tmp), project)
        check(proc.returncode == 0, f"install exits 0: {proc.stderr}")
        check(entries(tmp, "toolkits") == ["12.4.1"] and entries(tmp, "cudnn") == ["9.1.0-cuda12"],
              f"{entries(tmp, 'toolkits')} {entries(tmp, 'cudnn')}")


@case
def no_project_file_is_a_usage_error_saying_what_to_do(tmp):
    (tmp / "elsewhere").mkdir()
    proc = cudaenv(["install"], env_for(tmp), tmp / "elsewhere")
    expect_error(proc, 2, "no SPEC given", ".cudaenv", str(tmp / "elsewhere"))
    check("hint: name a version (cudaenv install 12.4), or pin one for this project first (cudaenv use 12.4)"
          in proc.stderr, proc.stderr)
    check(not (tmp / "root" / "toolkits").exists(), "nothing created")


@case
def a_project_file_without_a_cuda_pin_is_named(tmp):
    project = tmp / "p"
    project.mkdir()
    (project / ".cudaenv").write_text('[frameworks]\ntorch = "2.5"\n')
    proc = cudaenv(["install"], env_for(tmp), project)
    expect_error(proc, 2, f"{project}/.cudaenv pins no CUDA version")
    check("cudaenv use 12.4" in proc.stderr, proc.stderr)


finish()
