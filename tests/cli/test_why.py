"""`cudaenv why LIBRARY [--for FILE]`: the real pip wheel layout (nvidia-cuda-runtime's
libcudart.so.13 under site-packages/nvidia/cu13/lib, reached through $ORIGIN as torch reaches it)
in a real venv, LD_LIBRARY_PATH taking over, the real ld.so cache, and every answer compared with
what the real dynamic loader (ldd) picks for the same file and environment."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from harness import SKIP, case, check, clean_env, expect_error, finish, run
from scan_fixtures import make_venv

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path.home() / ".cache/cudaenv-ci/downloads"))
WHEELS = sorted((CACHE / "wheels").glob("nvidia_cuda_runtime-13.*.whl"))


def real_pick(file, library, env):
    """Where the real loader finds `library` for `file` in `env`."""
    out = subprocess.run(["ldd", str(file)], env=env, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name == library:
            return rest.split(" (")[0]
    return None


def wheel_site(tmp):
    """A venv with the real nvidia-cuda-runtime wheel unpacked into it, and a library in
    site-packages/torch/lib that needs libcudart.so.13 through $ORIGIN/../../nvidia/cu13/lib."""
    python, site = make_venv(tmp / "venv")
    with zipfile.ZipFile(WHEELS[-1]) as wheel:
        wheel.extractall(site)
    version = WHEELS[-1].name.split("-")[1]
    lib = site / "nvidia/cu13/lib"
    (site / "torch/lib").mkdir(parents=True)
    (tmp / "user.c").write_text("int cudaRuntimeGetVersion(int*);\nint v(int* x) { return cudaRuntimeGetVersion(x); }\n")
    user = site / "torch/lib/libtorch_like.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(tmp / "user.c"), f"-L{lib}", "-l:libcudart.so.13",
                    "-Wl,-rpath,$ORIGIN/../../nvidia/cu13/lib", "-Wl,--enable-new-dtags", "-o", str(user)],
                   check=True)
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH=f"{python.parent}:/usr/bin:/bin")
    return site, user, version, env


@case
def pip_wheel_copy_through_origin(tmp):
    if not WHEELS:
        print(f"note: no nvidia_cuda_runtime 13 wheel in {CACHE}/wheels (test_e2e_install.py fetches it); not checked")
        return
    site, user, version, env = wheel_site(tmp)
    report = json.loads(run(["why", "libcudart.so.13", "--for", str(user), "--json"], env, check_exit=0).stdout)
    wheel_copy = str((site / "nvidia/cu13/lib/libcudart.so.13").resolve())
    check(report["loads"]["path"] == wheel_copy, report)
    check(report["loads"]["version"] == version and report["loads"]["version_source"] == "wheel nvidia_cuda_runtime",
          report["loads"])
    check(report["loads"]["origin"] == "pip wheel", report["loads"])
    check(report["search"][-1]["source"] == "DT_RUNPATH of libtorch_like.so", report["search"])
    real = real_pick(user, "libcudart.so.13", env)
    check(real and str(Path(real).resolve()) == wheel_copy, (real, wheel_copy))


@case
def ld_library_path_takes_over_and_mismatch_is_flagged(tmp):
    if not WHEELS:
        return
    site, user, version, env = wheel_site(tmp)
    other = tmp / "toolkit" / "lib64"
    other.mkdir(parents=True)
    # A second real copy, as a toolkit keeps it: the versioned file and its soname link.
    real = other / "libcudart.so.13.0.48"
    real.write_bytes((site / "nvidia/cu13/lib/libcudart.so.13").read_bytes())
    (other / "libcudart.so.13").symlink_to(real.name)
    env["LD_LIBRARY_PATH"] = str(other)
    env["CUDA_HOME"] = str(tmp / "elsewhere")
    proc = run(["why", "libcudart.so.13", "--for", str(user)], env, check_exit=0)
    check(f"Loads      {real}  version 13.0.48 (from file name)\n" in proc.stdout, proc.stdout)
    check("[LD_LIBRARY_PATH]  found" in proc.stdout, proc.stdout)
    check(f"Also       {(site / 'nvidia/cu13/lib/libcudart.so.13').resolve()}  version {version}  (pip wheel)"
          in proc.stdout, proc.stdout)
    real_copy = real_pick(user, "libcudart.so.13", env)
    check(real_copy and Path(real_copy).resolve() == real.resolve(), ("ldd disagrees", real_copy))
    # The active toolkit is the wheel's directory's neighbour: its copy is not the one loading.
    env["CUDA_HOME"] = str(site / "nvidia/cu13")
    proc = run(["why", "libcudart.so.13", "--for", str(user)], env, check_exit=1)
    check(f"Mismatch   the active toolkit ($CUDA_HOME) has libcudart.so.13 {version}, but 13.0.48 loads"
          in proc.stdout, proc.stdout)
    check(f"fix: scope LD_LIBRARY_PATH: remove {other} from it" in proc.stdout, proc.stdout)


@case
def the_real_ld_cache_answers_for_libc(tmp):
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin")
    report = json.loads(run(["why", "libc.so.6", "--json"], env, check_exit=0).stdout)
    check(report["search"][-1]["source"] == "ld.so cache", report["search"])
    expected = real_pick("/bin/true", "libc.so.6", env)
    check(report["loads"]["path"] == str(Path(expected).resolve()), (report["loads"], expected))


@case
def nothing_found_and_bad_names(tmp):
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin")
    proc = run(["why", "libnot-a-library-anywhere.so.7"], env, check_exit=3)
    check("Loads      nothing: no copy on the search path" in proc.stdout, proc.stdout)
    proc = run(["why", "/usr/lib/libc.so.6"], env)
    expect_error(proc, 2, "LIBRARY /usr/lib/libc.so.6: not a library name")
    check("hint: give a soname such as libcudnn.so.9 (a file that needs it goes in --for FILE)" in proc.stderr,
          proc.stderr)
    (tmp / "script.sh").write_text("#!/bin/sh\n")
    expect_error(run(["why", "libc.so.6", "--for", str(tmp / "script.sh")], env), 1, "script.sh", "not a valid ELF")


finish()
