"""`cudaenv lock --source pypi` and `cudaenv sync` of such a lock: the toolkit and cuDNN pinned as
NVIDIA's wheels (file name, version, sha256, size as the index lists them), the lock's source
followed by `lock --check` and `sync` on a teammate's machine without any flag, the prefix laid out
as an install from the index is, and every way the index and the lock can disagree refused before
anything is placed (exit 6). Served on loopback by pypi_index.py from synthetic wheels in NVIDIA's
layout."""

import json
import subprocess
import tomllib

from framework_wheels import framework_index
from harness import case, check, clean_env, expect_error, finish, mirror_server, run_in
from synthetic_mirror import cudnn_release, toolkit_release
from synthetic_wheels import cuda12_release, cuda13_release, cudnn_wheel

PROJECT = """cuda = "13.0"
cudnn = "9.13"
[targets.h200]
driver = "580.95.05"
arch = ["9.0"]
"""


def project_of(tmp, text=PROJECT):
    project = tmp / "repo"
    project.mkdir(exist_ok=True)
    (project / ".cudaenv").write_text(text)
    (tmp / "sysroot").mkdir(exist_ok=True)
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    cuda12_release(wheels)
    cudnn_wheel(wheels, 13, "9.13.0.50")
    return project, wheels


def env_for(tmp, index, root="root", **extra):
    extra.setdefault("CUDAENV_MIRROR", "http://127.0.0.1:9")
    """A machine whose pip index is `index`; the redist mirror is a closed port, so nothing may
    come from there."""
    (tmp / root).mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / root, CUDAENV_SYSROOT=tmp / "sysroot",
                     PIP_INDEX_URL=f"{index}/simple",
                     CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2, PWD=tmp / "repo", **extra)


def read_lock(project):
    return tomllib.loads((project / ".cudaenv.lock").read_text())


def listed_files(index, project):
    """The index's PEP 691 page of `project`: {file name: its entry}."""
    out = subprocess.run(["curl", "-sf", "-H", "Accept: application/vnd.pypi.simple.v1+json",
                          f"{index}/simple/{project}/"], capture_output=True, text=True, check=True)
    return {f["filename"]: f for f in json.loads(out.stdout)["files"]}


@case
def lock_from_an_index_pins_the_wheels_it_lists_and_the_check_follows_the_lock(tmp):
    project, wheels = project_of(tmp)
    with framework_index(wheels) as (index, _):
        env = env_for(tmp, index)
        proc = run_in(["lock", "--source", "pypi"], env, project, expect=0)
        check("CUDA 13.0.2 (6 wheels)" in proc.stdout and "cuDNN 9.13.0" in proc.stdout, proc.stdout)
        check("cuda_gdb" in proc.stderr and "no wheels" in proc.stderr,
              f"what a full toolkit from the index lacks is said: {proc.stderr!r}")
        lock = read_lock(project)
        check(lock["source"] == "pypi", f"the lock says where its files come from: {lock.get('source')}")
        check("simple" not in (project / ".cudaenv.lock").read_text(),
              "the index URL (it may hold credentials) is not written into a committed file")
        nvcc = next(c for c in lock["toolkit"]["components"] if c["name"] == "cuda_nvcc")
        entry = listed_files(index, "nvidia-cuda-nvcc")[nvcc["relative_path"]]
        check(nvcc["version"] == "13.0.88" and nvcc["sha256"] == entry["hashes"]["sha256"]
              and nvcc["size"] == entry["size"], f"nvcc's wheel as the index lists it: {nvcc} {entry}")
        cudnn = lock["cudnn"]
        check(cudnn["cuda_variant"] == "cuda13" and cudnn["components"][0]["relative_path"].startswith(
            "nvidia_cudnn_cu13-9.13.0.50-"), f"cuDNN's wheel: {cudnn}")
        # No flag on the check: the lock's own source is read, and it is current.
        proc = run_in(["lock", "--check"], env, project, expect=0)
        check("is current: CUDA 13.0.2 (6 wheels)" in proc.stdout, proc.stdout)
    # Asked for NVIDIA's archives of the same release instead, the lock is stale in its source, and
    # `sync` without --frozen locks them.
    toolkit_release(tmp / "mirror", "13.0.2", "13.0.88")
    cudnn_release(tmp / "mirror", "9.13.0", "9.13.0.50")
    with framework_index(wheels) as (index, _), mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, index, CUDAENV_MIRROR=url)
        proc = run_in(["lock", "--check", "--source", "redist"], env, project, expect=1)
        check("source" in proc.stdout and "pypi" in proc.stdout, f"the source is the difference: {proc.stdout!r}")
        proc = run_in(["sync", "--source", "redist"], env, project, expect=0)
        check("source" in proc.stdout and "installed CUDA 13.0.2 (3 archives" in proc.stdout, proc.stdout)
        check("source" not in read_lock(project), "the lock is NVIDIA's archives now")


@case
def a_teammate_syncs_the_locked_wheels_without_a_flag_and_gets_a_toolkit(tmp):
    project, wheels = project_of(tmp)
    with framework_index(wheels) as (index, control):
        run_in(["lock", "--source", "pypi"], env_for(tmp, index), project, expect=0)
        teammate = env_for(tmp, index, root="teammate")
        proc = run_in(["sync", "--frozen"], teammate, project, expect=0)
        check("installed CUDA 13.0.2 (6 wheels, each matching the lock)" in proc.stdout, proc.stdout)
        check("installed cuDNN 9.13.0" in proc.stdout, proc.stdout)
        requests = open(str(control) + ".log").read()
        # A second sync installs nothing again.
        again = run_in(["sync", "--frozen"], teammate, project, expect=0)
        check("CUDA 13.0.2 is already installed" in again.stdout, again.stdout)
    prefix = tmp / "teammate" / "toolkits" / "13.0.2"
    out = subprocess.run([str(prefix / "bin" / "nvcc"), "--version"], capture_output=True, text=True)
    check("V13.0.88" in out.stdout, f"the synced prefix's nvcc runs: {out.stdout!r} {out.stderr!r}")
    link = prefix / "lib" / "libcudart.so"
    check(link.is_symlink() and str(link.readlink()) == "libcudart.so.13",
          "laid out as an install from the index: the unversioned library names are there")
    receipt = json.loads((prefix / "cudaenv-receipt.json").read_text())
    check(receipt["source"] == "pypi", f"the receipt names the index as source: {receipt['source']}")
    check((tmp / "teammate" / "cudnn" / "9.13.0-cuda13" / "include" / "cudnn_version.h").is_file(),
          "cuDNN from its wheel")
    check("/files/nvidia_cuda_nvcc-13.0.88" in requests, "the wheels came from the index")


@case
def a_lock_the_index_does_not_vouch_for_installs_nothing(tmp):
    project, wheels = project_of(tmp)
    with framework_index(wheels) as (index, control):
        run_in(["lock", "--source", "pypi"], env_for(tmp, index), project, expect=0)
        good = (project / ".cudaenv.lock").read_text()
        nvcc = next(c for c in read_lock(project)["toolkit"]["components"] if c["name"] == "cuda_nvcc")
        forged = {
            "a digest the index does not list": good.replace(nvcc["sha256"], "0" * 64),
            "another wheel filed as nvcc": good.replace(nvcc["relative_path"],
                                                        nvcc["relative_path"].replace("cuda_nvcc", "cuda_runtime")),
            "a path for a wheel name": good.replace(nvcc["relative_path"], "../../" + nvcc["relative_path"]),
            "a source cudaenv does not know": good.replace("source = 'pypi'", "source = 'ftp'"),
        }
        for why, text in forged.items():
            (project / ".cudaenv.lock").write_text(text)
            for args in (["sync"], ["sync", "--frozen"]):
                proc = run_in(args, env_for(tmp, index, root="victim"), project)
                expect_error(proc, 6, ".cudaenv.lock")
                check(not (tmp / "victim" / "toolkits" / "13.0.2").exists(), f"{why}: nothing installed")
        # The index replaced the wheel (and its listing) since the lock: refused before placing.
        (project / ".cudaenv.lock").write_text(good)
        control.write_text(json.dumps({"wrong_sha256": [nvcc["relative_path"]]}))
        proc = run_in(["sync", "--frozen"], env_for(tmp, index, root="victim"), project)
        expect_error(proc, 6, "cuda_nvcc")
        check(not (tmp / "victim" / "toolkits" / "13.0.2").exists(), "nothing installed")


@case
def an_index_lock_needs_sizes_and_a_compiler(tmp):
    project, wheels = project_of(tmp)
    with framework_index(wheels, {"format": "html"}) as (index, _):
        proc = run_in(["lock", "--source", "pypi"], env_for(tmp, index), project)
        expect_error(proc, 6, "lists no size for nvidia_")
        check("PEP 691" in proc.stderr, f"the hint names the JSON API: {proc.stderr!r}")
        check(not (project / ".cudaenv.lock").exists(), "no lock written")
    (project / ".cudaenv").write_text(PROJECT.replace('"13.0"', '"12.8"').replace('cudnn = "9.13"\n', ""))
    with framework_index(wheels) as (index, _):
        proc = run_in(["lock", "--source", "pypi"], env_for(tmp, index), project)
        expect_error(proc, 2, "no nvcc")
        check("cudaenv lock --source redist" in proc.stderr, f"the hint is lock's own flag: {proc.stderr!r}")


finish()
