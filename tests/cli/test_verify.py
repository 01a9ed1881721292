"""`cudaenv verify` with this machine's real CUDA toolkit: its nvcc builds the device-query
program and the outcome is classified (without a driver: no_driver, exit 7; with a GPU: ok,
exit 0); a second run finds the program in the build cache. Skipped where there is no nvcc."""

import json
import os
import shutil
import sys
from pathlib import Path

from harness import SKIP, case, check, clean_env, finish, run


def real_nvcc():
    """The nvcc a user of this machine would get: on PATH, else the /usr/local/cuda link's."""
    nvcc = shutil.which("nvcc")
    if nvcc:
        return nvcc
    fallback = Path("/usr/local/cuda/bin/nvcc")
    return str(fallback) if os.access(fallback, os.X_OK) else None


if not real_nvcc():
    print("skip: no nvcc on PATH and no /usr/local/cuda")
    sys.exit(SKIP)


def verify_json(args, env, expect_exit):
    proc = run(["verify", *args, "--json"], env, check_exit=expect_exit)
    return json.loads(proc.stdout)


def machine_has_driver(env):
    return json.loads(run(["info", "--json"], env, check_exit=0).stdout)["driver"] is not None


@case
def real_toolkit_builds_runs_and_then_hits_the_cache(tmp):
    root = tmp / "cudaenv"
    env = clean_env(tmp, CUDAENV_ROOT=root)
    with_driver = machine_has_driver(env)
    first = verify_json([], env, 0 if with_driver else 7)
    build = first["build"]
    check(build["ok"], f"the program compiled: {build['output']}")
    check(build["cached"] is False, "the first run compiles")
    check(Path(build["binary"]).is_file(), f"the program is in the cache: {build['binary']}")
    check(str(root / "cache" / "verify") in build["binary"], "cache below $CUDAENV_ROOT/cache/verify")
    command = " ".join(build["command"])
    check("-cudart shared" in command, f"linked against the shared cudart: {command}")
    check(f"arch=compute_{build['archs'][0][3:]},code={build['archs'][0]}" in command,
          f"machine code for {build['archs']}: {command}")
    check(first["toolkit"]["selected_by"] in ("PATH", "default-link"), f"{first['toolkit']}")
    if with_driver:
        check(first["ok"] and first["cause"] is None, f"verify passes with a GPU: {first}")
        check(all(g["kernel"] and g["kernel"]["ok"] for g in first["gpus"]), "kernels checked")
        check(all(g["bandwidth_gbs"] for g in first["gpus"]), "bandwidth reported")
    else:
        check(first["cause"] == "no_driver", f"cause no_driver: {first['cause']} {first['message']}")
        check("cudaGetDeviceCount" in first["message"], f"names the call: {first['message']}")
        check(first["fix"], "a fix is given")
        release = ".".join(first["toolkit"]["version"].split(".")[:2])
        check(first["run"]["runtime_version"] == release,
              f"the toolkit's own runtime ran: {first['run']}")

    second = verify_json([], env, 0 if with_driver else 7)
    check(second["build"]["cached"] is True, "the second run only runs the program")
    check(second["build"]["command"] is None, "no compile the second time")
    check(second["build"]["binary"] == build["binary"], "the same program")
    check(second["cause"] == first["cause"], "the same verdict")

    text = run(["verify"], env, check_exit=0 if with_driver else 7).stdout
    check("Toolkit" in text and "Build" in text and "cached" in text, f"text report:\n{text}")
    if not with_driver:
        check("FAILED: no_driver" in text and "Fix" in text, f"text names the cause:\n{text}")


@case
def a_framework_that_is_not_installed_fails_that_check_only(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "cudaenv")
    probe = run(["verify", "--jax", "--json"], env)
    report = json.loads(probe.stdout)
    jax = report["frameworks"][0]
    if jax["installed"]:
        print("skip part: jax is installed here")
        return
    check(probe.returncode == 7, "a failed framework check fails verify")
    check(jax["cause"]["id"] == "framework_not_installed", f"{jax}")
    check("No module named" in jax["message"], f"the import error is quoted: {jax['message']}")


@case
def build_only_builds_for_the_named_architectures_and_runs_nothing(tmp):
    """What a container build without a GPU can check: the toolkit compiles and links the device
    query for the targets' architectures. It passes on a machine with no driver, where the full
    verify fails (exit 7)."""
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "cudaenv")
    report = verify_json(["--build-only", "--only-arch", "8.0", "--only-arch", "9.0"], env, 0)
    check(report["ok"] and report["build_only"] and report["run"] is None and report["gpus"] == [],
          f"built, nothing ran: {report}")
    check(report["build"]["ok"] and report["build"]["archs"][:2] == ["sm_80", "sm_90"], f"{report['build']}")
    check(Path(report["build"]["binary"]).is_file(), "the program was built")
    text = run(["verify", "--build-only", "--only-arch", "9.0"], env, check_exit=0).stdout
    check("not run (--build-only)" in text and "builds GPU code for" in text, f"text report:\n{text}")
    if not machine_has_driver(env):
        run(["verify"], env, check_exit=7)  # the full check needs a driver
    proc = run(["verify", "--build-only", "--torch"], env, check_exit=2)
    check("--build-only runs nothing" in proc.stderr, proc.stderr)


@case
def a_spec_that_is_not_installed_is_exit_3_with_the_install_hint(tmp):
    proc = run(["verify", "10.1.999"], clean_env(tmp, CUDAENV_ROOT=tmp / "cudaenv"), check_exit=3)
    check("cudaenv install 10.1.999" in proc.stderr, f"hint names the install command: {proc.stderr}")
    check(proc.stdout == "", "nothing on stdout")


@case
def a_bad_diagnostic_flag_is_a_usage_error(tmp):
    proc = run(["verify", "--only-arch", "ampere"], clean_env(tmp), check_exit=2)
    check("--only-arch" in proc.stderr, proc.stderr)


finish()
