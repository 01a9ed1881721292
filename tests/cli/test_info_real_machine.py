"""`cudaenv info` on the machine the tests run on: whatever it is, the report must be truthful.
On a machine with a CUDA toolkit (CI carries 13.0), info must find the nvcc a user would run and
report the same full version nvcc itself prints."""

import re
import shutil
import subprocess

from harness import case, check, clean_env, finish, run, run_json


def nvcc_on_path():
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None, None
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release [0-9.]+, V([0-9.]+)", out)
    return nvcc, match.group(1) if match else None


@case
def json_has_the_documented_shape(tmp):
    report = run_json(["info"], clean_env(tmp))
    for key in ("driver", "gpus", "modules", "toolkits", "compilers", "os", "env"):
        check(key in report, f"top-level key {key} missing")
    check(isinstance(report["gpus"], list), "gpus is a list")
    check(report["os"]["id"], "os id read from /etc/os-release")


@case
def finds_the_toolkit_nvcc_belongs_to(tmp):
    nvcc, version = nvcc_on_path()
    if not nvcc:
        print("skip part: no nvcc on PATH")
        return
    report = run_json(["info"], clean_env(tmp))
    via_path = [t for t in report["toolkits"] if any(o["kind"] == "PATH" for o in t["origins"])]
    check(len(via_path) == 1, f"exactly one toolkit reached through PATH: {report['toolkits']}")
    if via_path:
        check(via_path[0]["nvcc_version"] == version,
              f"nvcc version {via_path[0]['nvcc_version']} == nvcc --version's {version}")
        check(via_path[0]["version"] is not None, "toolkit has a full version")


@case
def no_driver_is_said_plainly_and_exits_zero(tmp):
    report = run_json(["info"], clean_env(tmp))
    if report["driver"] is not None:
        print("skip part: this machine has an NVIDIA driver")
        return
    proc = run(["info"], clean_env(tmp), check_exit=0)
    check("Driver     none" in proc.stdout, f"text report says there is no driver:\n{proc.stdout}")


@case
def unknown_command_is_a_usage_error(tmp):
    proc = run(["infoo"], clean_env(tmp))
    check(proc.returncode == 2, f"exit 2 for a usage error, got {proc.returncode}")
    check(proc.stderr.startswith("cudaenv: error:"), f"one-line error: {proc.stderr!r}")
    check(proc.stdout == "", "nothing on stdout")


finish()
