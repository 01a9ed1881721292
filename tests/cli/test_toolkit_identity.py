"""One identity per toolkit: a toolkit found by its nvcc version (13.0.88) is also known by its
release (13.0.2), named from the compatibility database's nvcc and cudart versions. `info`,
`list`, `verify`, `.cudaenv` and `use` accept either name, releases sort as versions (13.0.10
after 13.0.2), and no hint ever says `cudaenv install 13.0.88`."""

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from harness import DEBIAN_PATH, BINARY, case, check, clean_env, finish, install_synthetic_toolkits, run

MANIFEST = Path(__file__).resolve().parents[2] / "manifests" / "cuda.toml"


def nvcc_script(release, nvcc):
    return ("#!/bin/sh\n"
            'echo "nvcc: NVIDIA (R) Cuda compiler driver"\n'
            f'echo "Cuda compilation tools, release {release}, V{nvcc}"\n')


def system_toolkit(machine, prefix, nvcc=None, cudart=None, version_json=None):
    """A toolkit below the fixture machine's root: an nvcc that reports `nvcc`, a runtime
    library whose file name carries `cudart`, or a version.json recording a release."""
    root = machine / prefix.lstrip("/")
    (root / "bin").mkdir(parents=True)
    if nvcc:
        tool = root / "bin" / "nvcc"
        tool.write_text(nvcc_script(".".join(nvcc.split(".")[:2]), nvcc))
        tool.chmod(0o755)
        (root / "bin" / "nvcc.profile").write_text("TOP = $(_HERE_)/..\n")
    if cudart:
        (root / "lib64").mkdir()
        (root / "lib64" / f"libcudart.so.{cudart}").write_text("elf")
    if version_json:
        (root / "version.json").write_text(json.dumps(version_json))


def fixture_machine(tmp):
    """Four system toolkits: nvcc 13.0.88 with cudart 13.0.96 (only 13.0.2 ships both), nvcc
    13.0.88 alone (13.0.1 or 13.0.2), one recording release 13.0.10 in its version.json, and nvcc
    12.4.131 (12.4.1)."""
    machine = tmp / "machine"
    system_toolkit(machine, "/usr/local/cuda-13.0", nvcc="13.0.88", cudart="13.0.96")
    system_toolkit(machine, "/usr/local/cuda-13.0-bare", nvcc="13.0.88")
    system_toolkit(machine, "/opt/cuda", nvcc="13.0.140", version_json={"cuda": {"version": "13.0.10"},
                                                       "cuda_nvcc": {"version": "13.0.140"}})
    system_toolkit(machine, "/usr/local/cuda-12.4", nvcc="12.4.131")
    home = tmp / "home"
    home.mkdir()
    return clean_env(home, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=tmp / "root", PATH=DEBIAN_PATH)


def run_in(directory, args, env, timeout=120):
    return subprocess.run([BINARY, *args], cwd=directory, env=env, capture_output=True, text=True,
                          timeout=timeout)


@case
def info_and_list_name_system_toolkits_by_release_and_nvcc(tmp):
    env = fixture_machine(tmp)
    info = run(["info"], env, check_exit=0).stdout
    check("13.0.2  /usr/local/cuda-13.0  (from nvcc --version, nvcc 13.0.88, cudart 13.0.96, "
          "release from the compatibility database;" in info, f"info names the toolkit by release and nvcc:\n{info}")
    check("13.0.1 or 13.0.2 (nvcc 13.0.88)  /usr/local/cuda-13.0-bare" in info,
          f"nvcc alone cannot tell 13.0.1 from 13.0.2, and says so:\n{info}")
    toolkits = {t["path"]: t for t in json.loads(run(["info", "--json"], env, check_exit=0).stdout)["toolkits"]}
    named = toolkits["/usr/local/cuda-13.0"]
    check((named["version"], named["nvcc_version"], named.get("cudart_version")) == ("13.0.2", "13.0.88", "13.0.96"),
          f"info --json: {named}")
    check(toolkits["/usr/local/cuda-12.4"]["version"] == "12.4.1", f"12.4.131 is 12.4.1: {toolkits}")

    listed = run(["list"], env, check_exit=0).stdout
    system = listed.split("Found on the system")[1]
    order = [line.split()[0] for line in system.splitlines() if line.startswith("  ")]
    check(order == ["13.0.10", "13.0.2", "13.0.1", "12.4.1"],
          f"newest release first, 13.0.10 above 13.0.2, never sorted by nvcc's 13.0.88: {order}\n{listed}")
    check("13.0.2 (nvcc 13.0.88)  /usr/local/cuda-13.0" in listed, f"list shows both names:\n{listed}")


@case
def verify_accepts_the_release_or_the_nvcc_version(tmp):
    env = fixture_machine(tmp)
    for spec in ("13.0.2", "13.0.88"):
        proc = run(["verify", spec, "--json"], env)
        check(proc.returncode == 7, f"verify {spec}: the stand-in nvcc cannot build (exit 7), not "
                                    f"'not installed': {proc.returncode} {proc.stderr}")
        if proc.returncode == 7:
            toolkit = json.loads(proc.stdout)["toolkit"]
            check(toolkit["path"] == "/usr/local/cuda-13.0" and toolkit["version"] == "13.0.2",
                  f"verify {spec} picks the 13.0.2 toolkit: {toolkit}")
    proc = run(["verify", "13.0.10"], env)
    check(proc.returncode == 7 and "CUDA 13.0.10 (nvcc 13.0.140)  /opt/cuda" in proc.stdout,
          f"verify 13.0.10 names the toolkit by both names:\n{proc.stdout}{proc.stderr}")


@case
def a_cudaenv_naming_nvcc_suggests_installing_the_release(tmp):
    env = fixture_machine(tmp)
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.4.131"\n')
    listed = run_in(project, ["list"], env).stdout
    check("cudaenv install 12.4.1" in listed and "install 12.4.131" not in listed,
          f"the hint names the release:\n{listed}")
    proc = run_in(project, ["verify"], env)
    check("install 12.4.131" not in proc.stderr, f"verify never suggests nvcc's version: {proc.stderr}")
    # That toolkit records its version nowhere but in what its nvcc prints: what applies here
    # never runs a program to decide (the hook decides at every prompt), so every command agrees
    # it is not installed, and verify lists what it found.
    check(proc.returncode == 3 and "12.4.1 (nvcc 12.4.131) (/usr/local/cuda-12.4)" in proc.stderr,
          f"not installed, as list and the hook say: {proc.returncode} {proc.stderr}")

    proc = run_in(project, ["use", "12.4.131"], env)
    check(proc.returncode == 0 and "unknown version" not in proc.stderr,
          f"use 12.4.131 checks compatibility as CUDA 12.4.1: {proc.stderr}")


@case
def a_cudaenv_naming_nvcc_activates_the_installed_release(tmp):
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"})
    project = tmp / "repo"
    project.mkdir()
    for spec in ("12.4.131", "12.4.1"):
        (project / ".cudaenv").write_text(f'cuda = "{spec}"\n')
        proc = run_in(project, ["exec", "--", "nvcc", "--echo-args"], env)
        check(proc.returncode == 0 and proc.stdout.startswith(f"nvcc 12.4.131 CUDA_HOME={tmp}/root/toolkits/12.4.1"),
              f".cudaenv {spec} activates the installed 12.4.1: {proc.stdout!r} {proc.stderr!r}")
        listed = run_in(project, ["list"], env).stdout
        check(f"* 12.4.1  {tmp}/root/toolkits/12.4.1" in listed, f"list marks it active for {spec}:\n{listed}")


@case
def installing_by_nvcc_version_installs_the_release(tmp):
    from harness import mirror_server
    from synthetic_mirror import toolkit_release
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.4.131"\n')
    # The prompt's fast path loads no database: its hint is the no-SPEC install, never nvcc's.
    current = run_in(project, ["current"], env)
    check(current.returncode == 3 and "run: cudaenv install (in " in current.stderr
          and "install 12.4.131" not in current.stderr, f"current's hint: {current.stderr}")
    with mirror_server(tmp / "mirror") as (url, _):
        pinned = run_in(project, ["install", "--mirror", url], env)
        check(pinned.returncode == 0 and "installed CUDA 12.4.1" in pinned.stdout,
              f"install with no SPEC installs the release shipping the pinned nvcc: {pinned.stdout} {pinned.stderr}")
        run(["uninstall", "12.4.1"], env, check_exit=0)
        named = run(["install", "12.4.131", "--mirror", url], env)
        check(named.returncode == 0 and "installed CUDA 12.4.1" in named.stdout,
              f"install 12.4.131 installs 12.4.1: {named.stdout} {named.stderr}")
    check(run_in(project, ["current"], env).returncode == 0, "the pin is now satisfied")


@case
def the_real_nvcc_is_named_by_its_release(tmp):
    nvcc = shutil.which("nvcc", path=f"/usr/local/cuda/bin:{DEBIAN_PATH}")
    if not nvcc:
        print("skip: no nvcc on this machine")
        return
    reported = re.search(r"release [0-9.]+, V([0-9.]+)",
                         subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout)
    database = tomllib.loads(MANIFEST.read_text())
    releases = [r["version"] for r in database["release"] + database.get("redist", [])
                if reported and r.get("nvcc") == reported.group(1)]
    if not releases:
        print("skip: the database does not know this nvcc")
        return
    prefix = str(Path(nvcc).resolve().parent.parent)
    env = clean_env(tmp, PATH=f"{Path(nvcc).parent}:{DEBIAN_PATH}", CUDAENV_ROOT=tmp / "root")
    toolkits = json.loads(run(["info", "--json"], env, check_exit=0).stdout)["toolkits"]
    found = [t for t in toolkits if t["path"] == prefix]
    check(len(found) == 1, f"the nvcc on PATH ({prefix}) is found: {toolkits}")
    for toolkit in found:
        candidates = [toolkit["version"]] if toolkit.get("release_known") else toolkit.get("candidate_releases", [])
        check(toolkit["nvcc_version"] == reported.group(1) and candidates and set(candidates) <= set(releases),
              f"named by a release that ships nvcc {reported.group(1)} ({releases}): {toolkit}")
        check(f"(nvcc {reported.group(1)})" in toolkit.get("name", ""), f"both names: {toolkit.get('name')}")


finish()
