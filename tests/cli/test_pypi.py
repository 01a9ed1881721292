"""`cudaenv install --source pypi`: toolkits and cuDNN from a PyPI-compatible index (PEP 503 HTML
and PEP 691 JSON, served on loopback by pypi_index.py) laid out as redist installs are, every
wheel checked against the index's sha256, and the faults an index can have: a wrong digest, a
missing wheel, 404s, redirects. CUDA 12's wheels carry no nvcc: such a prefix is installed only
with --runtime-only, and `list` and `verify` say what it is."""

import contextlib
import json
import subprocess
from pathlib import Path

from framework_wheels import framework_index
from harness import BINARY, check, clean_env, expect_error, finish, global_config, run
from install_helpers import case
from synthetic_wheels import cuda12_release, cuda13_release, cudnn_wheel, write_wheel


@contextlib.contextmanager
def index_server(wheels, settings=None):
    """Serves `wheels` (see pypi_index.py); yields (index URL, control file)."""
    with framework_index(wheels, settings) as (base, control):
        yield f"{base}/simple", control


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot",
                     CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2, **extra)


def wheels_of(tmp):
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    cuda12_release(wheels)
    cudnn_wheel(wheels, 13, "9.13.0.50")
    cudnn_wheel(wheels, 13, "9.14.0.64")
    cudnn_wheel(wheels, 12, "9.14.0.64")
    return wheels


def log_of(control):
    path = Path(str(control) + ".log")
    return path.read_text() if path.exists() else ""


def receipt_of(prefix):
    return json.loads((prefix / "cudaenv-receipt.json").read_text())


@case
def toolkit_from_a_json_index_is_laid_out_as_a_redist_install(tmp):
    env = env_for(tmp)
    with index_server(wheels_of(tmp)) as (index, control):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index], env, check_exit=0)
        requests = log_of(control)
    prefix = tmp / "root" / "toolkits" / "13.0.2"
    check("application/vnd.pypi.simple.v1+json" in requests, f"the JSON form was asked for: {requests}")
    nvcc = subprocess.run([str(prefix / "bin" / "nvcc"), "--version"], capture_output=True, text=True)
    check("V13.0.88" in nvcc.stdout, f"the wheel's nvcc runs from bin/: {nvcc.stdout!r} {nvcc.stderr!r}")
    for path in ("include/cuda_runtime.h", "include/crt/host_config.h", "include/cuda/std/version",
                 "nvvm/bin/cicc", "lib/libcudart.so.13", "lib64/libcublas.so.13",
                 "share/licenses/cuda_nvcc/License.txt"):
        check((prefix / path).is_file(), f"{path} in the prefix")
    # The unversioned names the linker and find_package(CUDAToolkit) look for, as redist has them.
    for name, target in (("libcudart.so", "libcudart.so.13"), ("libcublas.so", "libcublas.so.13")):
        link = prefix / "lib" / name
        check(link.is_symlink() and str(link.readlink()) == target, f"lib/{name} -> {target}")
    leftovers = [p.name for p in prefix.rglob("*") if p.name == "__init__.py" or p.name.endswith(".dist-info")]
    check(not leftovers, f"no Python package files in the prefix: {leftovers}")
    receipt = receipt_of(prefix)
    check(receipt["source"] == "pypi" and receipt["mirror"] == index, f"the receipt names the index: {receipt}")
    names = sorted(c["name"] for c in receipt["components"])
    check(names == ["cuda_cccl", "cuda_crt", "cuda_cudart", "cuda_nvcc", "libcublas", "libnvvm"],
          f"every pinned wheel, named as redist components: {names}")
    nvcc_row = next(c for c in receipt["components"] if c["name"] == "cuda_nvcc")
    check(nvcc_row["version"] == "13.0.88" and nvcc_row["url"].endswith(".whl") and len(nvcc_row["sha256"]) == 64,
          f"the wheel's version, URL and digest: {nvcc_row}")
    check("cuda_gdb" in proc.stderr and "nsight_compute" in proc.stderr and "skipped" in proc.stderr,
          f"full names what the index cannot bring: {proc.stderr!r}")
    listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)["installed"]
    check(listed[0]["source"] == "pypi" and listed[0]["runtime_only"] is False, f"list: {listed}")
    shown = run(["exec", "--cuda", "13.0.2", "--", "nvcc", "--version"], env, check_exit=0)
    check("V13.0.88" in shown.stdout, f"activation finds its nvcc: {shown.stdout!r}")


def marked_release(directory, release, cudla_marker):
    """A CUDA 13 release whose metapackage pins as cuda-toolkit 13.2+ does: nvidia-cudla under
    `cudla_marker`, with wheels for aarch64 alone; nvidia-cuda-opencl for x86-64 only; nvjitlink
    by a range whose lower bound is the release's own (a newer one is on the index too)."""
    tree = "nvidia/cu13"
    package = {"nvidia/__init__.py": ("", 0o644), f"{tree}/__init__.py": ("", 0o644)}
    write_wheel(directory, "nvidia-cuda-runtime", "13.2.51",
                {**package, f"{tree}/lib/libcudart.so.13": ("cudart", 0o644)})
    write_wheel(directory, "nvidia-cuda-opencl", "13.2.51",
                {**package, f"{tree}/lib/libOpenCL.so.1": ("opencl", 0o644)})
    for version in ("13.2.51", "13.9.1"):
        write_wheel(directory, "nvidia-nvjitlink", version,
                    {**package, f"{tree}/lib/libnvJitLink.so.13": (f"nvjitlink {version}", 0o644)})
    write_wheel(directory, "nvidia-cudla", "13.2.51", {**package, f"{tree}/lib/libcudla.so.1": ("cudla", 0o644)},
                platform="manylinux2014_aarch64.manylinux_2_17_aarch64")
    lines = ("Provides-Extra: all\n"
             "Requires-Dist: nvidia-cuda-runtime==13.2.51.*; (sys_platform == 'linux') and extra == 'all'\n"
             "Requires-Dist: nvidia-cuda-opencl==13.2.51.*; (sys_platform == 'linux' and "
             "platform_machine == 'x86_64' or sys_platform == 'win32') and extra == 'all'\n"
             "Requires-Dist: nvidia-nvjitlink<14,>=13.2.51; (sys_platform == 'linux') and extra == 'all'\n"
             f"Requires-Dist: nvidia-cudla==13.2.51.*; ({cudla_marker}) and extra == 'all'\n"
             "Requires-Dist: nvidia-cudla==13.2.51.*; (sys_platform == 'linux') and extra == 'cudla'\n")
    write_wheel(directory, "cuda-toolkit", release, {}, platform="any", metadata_extra=lines)


@case
def full_installs_follow_the_metapackages_markers(tmp):
    env = env_for(tmp)
    wheels = tmp / "wheels"
    marked_release(wheels, "13.2.1", "sys_platform == 'linux' and platform_machine == 'aarch64'")
    marked_release(wheels, "13.2.0", "sys_platform == 'linux'")  # as NVIDIA's 13.2.0 marks it
    with index_server(wheels) as (index, _):
        for release in ("13.2.1", "13.2.0"):
            proc = run(["install", release, "--source", "pypi", "--index-url", index], env)
            check(proc.returncode == 0, f"the full {release} installs on x86-64: {proc.stderr!r}")
            names = sorted(c["name"] for c in receipt_of(tmp / "root" / "toolkits" / release)["components"])
            check(names == ["cuda_cudart", "cuda_opencl", "libnvjitlink"],
                  f"{release}: the pins whose markers hold here, nothing for aarch64: {names}")
            nvjitlink = next(c for c in receipt_of(tmp / "root" / "toolkits" / release)["components"]
                             if c["name"] == "libnvjitlink")
            check(nvjitlink["version"] == "13.2.51", f"a range takes the release's own version: {nvjitlink}")
        check("left out" in proc.stderr and "libcudla" in proc.stderr,
              f"13.2.0's cudla pin, whose wheels are for aarch64 alone, is named as left out: {proc.stderr!r}")
        # Asked for by name, a component with no wheel for this platform is an error, not a skip.
        named = run(["install", "13.2.0", "--source", "pypi", "--index-url", index, "--components",
                     "cuda_cudart,nvidia-cudla", "--force"], env)
        check(named.returncode != 0 and "nvidia-cudla" in named.stderr and "linux-x86_64" in named.stderr,
              f"a named component without a wheel here is refused: {named.returncode} {named.stderr!r}")


@case
def html_index_with_relative_links_and_redirects(tmp):
    env = env_for(tmp)
    settings = {"format": "html", "relative_links": True, "redirect_pages": True, "redirect_files": True}
    with index_server(wheels_of(tmp), settings) as (index, control):
        run(["install", "13.0", "--index-url", index + "/", "--components", "minimal"],
            env, check_exit=0)
        requests = log_of(control)
    prefix = tmp / "root" / "toolkits" / "13.0.2"
    check("GET /moved/simple/cuda-toolkit/" in requests and "GET /redirect/" in requests and "GET /files/" in requests,
          f"page and file redirects were followed: {requests}")
    check((prefix / "bin" / "nvcc").is_file(), "minimal brings nvcc")
    check(not (prefix / "lib" / "libcublas.so.13").exists(), "minimal leaves cuBLAS out")


@case
def wrong_sha256_installs_nothing(tmp):
    env = env_for(tmp)
    wheels = wheels_of(tmp)
    bad = next(p.name for p in wheels.iterdir() if p.name.startswith("nvidia_cuda_nvcc-"))
    with index_server(wheels, {"wrong_sha256": [bad]}) as (index, _):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index], env)
    expect_error(proc, 6, "sha256 mismatch", bad)
    check(not (tmp / "root" / "toolkits" / "13.0.2").exists(), "nothing installed")
    check(not (tmp / "root" / "cache" / "downloads" / bad).exists(), "the bad download is not kept")


@case
def index_without_digests_is_refused(tmp):
    env = env_for(tmp)
    wheels = wheels_of(tmp)
    bare = next(p.name for p in wheels.iterdir() if p.name.startswith("nvidia_cuda_runtime-"))
    with index_server(wheels, {"no_sha256": [bare]}) as (index, _):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index], env)
    expect_error(proc, 6, "no sha256", bare)


@case
def missing_wheel_and_404s_are_named(tmp):
    env = env_for(tmp)
    wheels = wheels_of(tmp)
    runtime = next(p.name for p in wheels.iterdir() if p.name.startswith("nvidia_cuda_runtime-"))
    write_wheel(wheels, "nvidia-cuda-runtime", "13.0.48", {"nvidia/cu13/lib/libcudart.so.13": ("old", 0o644)})
    write_wheel(wheels, "nvidia-cuda-runtime", "13.0.96", {}, platform="win_amd64")
    with index_server(wheels, {"omit": [runtime]}) as (index, _):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index], env)
        expect_error(proc, 3, "no linux-x86_64 wheel of nvidia-cuda-runtime 13.0.96")
        check("versions there: 13.0.48" in proc.stderr, f"the hint names what the index has: {proc.stderr!r}")
        proc = run(["install", "13.9", "--source", "pypi", "--index-url", index], env)
        expect_error(proc, 3, "no cuda-toolkit release matching \"13.9\"")
        check("newest there: 13.0.2, 12.8.1" in proc.stderr, f"the hint names the releases: {proc.stderr!r}")
    with index_server(wheels, {"status": {"/simple/cuda-toolkit/": 404}}) as (index, _):
        proc = run(["install", "13.9", "--source", "pypi", "--index-url", index], env)
        expect_error(proc, 3, "no project cuda-toolkit on the index",
                     "the database's redist rows give the component versions of no CUDA release matching \"13.9\"")
    with index_server(wheels, {"status": {"/files/" + runtime: 404}}) as (index, _):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index], env)
        expect_error(proc, 5, runtime, "index set by --index-url")
    check(not (tmp / "root" / "toolkits" / "13.0.2").exists(), "nothing installed")


@case
def index_without_the_metapackage_takes_versions_from_the_database(tmp):
    """A partial proxy or a devpi allow-list: the component wheels, no cuda-toolkit project. The
    wheel versions are the redist component versions, which the database's redist rows give."""
    env = env_for(tmp)
    wheels = wheels_of(tmp)
    write_wheel(wheels, "nvidia-cuda-culibos", "13.0.85", {"nvidia/cu13/lib/libculibos.a": ("culibos", 0o644)})
    toolkit = [p.name for p in wheels.iterdir() if p.name.startswith("cuda_toolkit-")]
    prefix = tmp / "root" / "toolkits" / "13.0.2"
    with index_server(wheels, {"omit": toolkit}) as (index, _):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index, "--components", "minimal"], env)
        check(proc.returncode == 0, f"minimal installs without the metapackage: {proc.stderr!r}")
        check(f"cuda-toolkit is not on the index {index} (set by --index-url); component versions from the "
              "database's redist rows for 13.0.2" in proc.stderr, f"says where the versions came from: {proc.stderr!r}")
        versions = {c["name"]: c["version"] for c in receipt_of(prefix)["components"]}
        check(versions == {"cuda_cccl": "13.0.85", "cuda_crt": "13.0.88", "cuda_cudart": "13.0.96",
                           "cuda_culibos": "13.0.85", "cuda_nvcc": "13.0.88", "libnvvm": "13.0.88"},
              f"minimal, at redistrib_13.0.2.json's versions: {versions}")
        nvcc = subprocess.run([str(prefix / "bin" / "nvcc"), "--version"], capture_output=True, text=True)
        check("V13.0.88" in nvcc.stdout, f"the prefix's nvcc runs: {nvcc.stdout!r}")
        full = run(["install", "13.0.2", "--source", "pypi", "--index-url", index, "--force"], env)
        check(full.returncode == 0, f"full installs what the index has: {full.stderr!r}")
        check("left out, the index has no wheels of them:" in full.stderr and "libcufft" in full.stderr
              and "libcublas" not in full.stderr.split("left out")[1].splitlines()[0],
              f"full names the components the index lacks, not those it has: {full.stderr!r}")
        names = sorted(c["name"] for c in receipt_of(prefix)["components"])
        check("libcublas" in names and "libcufft" not in names, f"full takes every wheel the index has: {names}")
        # list-remote lists the releases whose cudart wheel the index carries at the row's version:
        # 13.0.2 (13.0.96) and 12.8.1 (12.8.90), not 13.0.1, whose cudart the index lacks.
        listed = run(["list-remote", "--source", "pypi", "--index-url", index], env, check_exit=0)
        check(listed.stdout.split() == ["13.0.2", "(installed)", "12.8.1"], f"list-remote: {listed.stdout!r}")
        check("cuda-toolkit is not on the index" in listed.stderr and "redist rows" in listed.stderr,
              f"list-remote says where the list came from: {listed.stderr!r}")
        # CUDA 12 from the rows: the -cu12 projects, runtime-only as with the metapackage.
        old = run(["install", "12.8.1", "--source", "pypi", "--index-url", index], env)
        expect_error(old, 2, "CUDA 12.8.1 from a package index has no nvcc")
        cu12 = run(["install", "12.8.1", "--source", "pypi", "--index-url", index, "--runtime-only",
                    "--components", "minimal"], env)
        expect_error(cu12, 3, "no project nvidia-cuda-cccl-cu12 on the index")
        cu12 = run(["install", "12.8.1", "--source", "pypi", "--index-url", index, "--runtime-only"], env)
        check(cu12.returncode == 0, f"a full runtime-only 12.8.1 from the rows: {cu12.stderr!r}")
        names = {c["name"]: c["version"] for c in receipt_of(tmp / "root" / "toolkits" / "12.8.1")["components"]}
        check(names == {"cuda_cudart": "12.8.90", "cuda_nvcc": "12.8.93"}, f"the cu12 wheels at the row's versions: {names}")
    check(not (tmp / "root" / "toolkits" / "13.9").exists(), "nothing installed for a release the rows lack")
    cudnn_only = tmp / "cudnn-only"
    cudnn_wheel(cudnn_only, 13, "9.14.0.64")
    with index_server(cudnn_only) as (index, _):
        proc = run(["install", "13.0.2", "--source", "pypi", "--index-url", index, "--force"], env)
        expect_error(proc, 3, "no project cuda-toolkit on the index", "nor any wheel of CUDA 13.0.2's components")


@case
def mirror_from_an_index_without_the_metapackage(tmp):
    env = env_for(tmp)
    wheels = wheels_of(tmp)
    write_wheel(wheels, "nvidia-cuda-culibos", "13.0.85", {"nvidia/cu13/lib/libculibos.a": ("culibos", 0o644)})
    toolkit = [p.name for p in wheels.iterdir() if p.name.startswith("cuda_toolkit-")]
    mirror = tmp / "mirror"
    with index_server(wheels, {"omit": toolkit}) as (index, _):
        global_config(env, f'index_url = "{index}"\n')
        proc = run(["mirror", "create", str(mirror), "--cuda", "13.0", "--components", "minimal",
                    "--source", "pypi"], env)
    check(proc.returncode == 0, f"the mirror is made from the component wheels: {proc.stderr!r}")
    check(f"cuda-toolkit is not on the index {index} (set by index_url in " in proc.stderr
          and "component versions from the database's redist rows for 13.0.2" in proc.stderr,
          f"says which index, where it was set, and where the versions came from: {proc.stderr!r}")
    check(f"wheels from the index {index} (set by index_url in " in proc.stdout,
          f"the result names the index and where it was set: {proc.stdout!r}")
    manifest = json.loads((mirror / "cuda" / "redist" / "redistrib_13.0.2.json").read_text())
    check(manifest["cuda_cudart"]["version"] == "13.0.96" and manifest["cuda_culibos"]["version"] == "13.0.85"
          and "libcublas" not in manifest, f"the minimal components at the row's versions: {list(manifest)}")


@case
def cudnn_beside_the_toolkit(tmp):
    env = env_for(tmp)
    with index_server(wheels_of(tmp)) as (index, _):
        run(["install", "13.0.2", "--cudnn", "9.13", "--source", "pypi", "--index-url", index],
            env, check_exit=0)
    cudnn = tmp / "root" / "cudnn" / "9.13.0-cuda13"
    check((cudnn / "lib" / "libcudnn.so.9").read_text() == "cudnn for cuda13", "the cu13 build")
    check("CUDNN_MINOR 13" in (cudnn / "include" / "cudnn_version.h").read_text(), "its headers")
    receipt = receipt_of(cudnn)
    check(receipt["source"] == "pypi" and receipt["components"][0]["version"] == "9.13.0.50",
          f"cuDNN's receipt: {receipt}")


def runtime_only_prefix_presents_no_compiler(tmp, env, prefix):
    """With another CUDA on PATH and in CUDACXX's reach (a system toolkit whose nvcc works), a
    project on the runtime-only 12.8.1 gets no compiler from anywhere: not the system's."""
    system = tmp / "system-cuda"
    (system / "bin").mkdir(parents=True)
    (system / "bin" / "nvcc").write_text("#!/bin/sh\necho system nvcc ran\n")
    (system / "bin" / "nvcc").chmod(0o755)
    (system / "version.json").write_text('{"cuda": {"version": "13.0.2"}}\n')
    # A conda environment with its own nvcc holds its Python too: it stays on PATH.
    conda = tmp / "conda-env"
    (conda / "conda-meta").mkdir(parents=True)
    (conda / "bin").mkdir()
    (conda / "bin" / "nvcc").write_text("#!/bin/sh\necho conda nvcc ran\n")
    (conda / "bin" / "nvcc").chmod(0o755)
    (conda / "version.json").write_text('{"cuda": {"version": "12.4.1"}}\n')
    env = dict(env, PATH=f"{system / 'bin'}:{conda / 'bin'}:{env['PATH']}")
    project = tmp / "project"
    project.mkdir()
    proc = subprocess.run([BINARY, "use", "12.8.1"], cwd=project, env=env, capture_output=True, text=True)
    check(proc.returncode == 0 and "runtime-only" in proc.stderr and "--source redist" in proc.stderr,
          f"use warns that the project gets no compiler: {proc.returncode} {proc.stderr!r}")
    for args in (["exec", "--", "nvcc", "--version"], ["which", "nvcc"]):
        proc = subprocess.run([BINARY, *args], cwd=project, env=env, capture_output=True, text=True)
        ran_another = "system nvcc ran" in proc.stdout or "conda nvcc ran" in proc.stdout
        check(proc.returncode != 0 and not ran_another and "runtime-only" in proc.stderr
              and "--source redist" in proc.stderr, f"{args[0]}: refused, the fix named: {proc.returncode} "
              f"{proc.stdout!r} {proc.stderr!r}")
    hooked = json.loads(subprocess.run([BINARY, "env", "--shell", "json"], cwd=project, env=env,
                                       capture_output=True, text=True, check=True).stdout)
    check(hooked.get("CUDACXX") is None, f"the hook sets no CUDACXX: {hooked.get('CUDACXX')!r}")
    path = hooked.get("PATH", "").split(":")
    check(path[0] == str(prefix / "bin") and str(system / "bin") not in path,
          f"the hook leaves no other CUDA's bin/ on PATH: {path}")
    check(str(conda / "bin") in path, f"a conda environment's bin/ stays: {path}")
    ran = subprocess.run(["sh", "-c", "command -v nvcc || echo none"], env=dict(env, PATH=hooked["PATH"]),
                         capture_output=True, text=True)
    check("system-cuda" not in ran.stdout, f"nvcc on the hooked PATH: {ran.stdout!r}")
    run(["modules", "write", str(tmp / "modules")], env, check_exit=0)
    lua = next((tmp / "modules").rglob("12.8.1.lua")).read_text()
    check("CUDACXX" not in lua and "runtime-only" in lua, f"the modulefile names no compiler: {lua!r}")


@case
def cuda12_wheels_give_a_runtime_only_prefix_only_when_asked(tmp):
    env = env_for(tmp)
    with index_server(wheels_of(tmp)) as (index, _):
        proc = run(["install", "12.8.1", "--source", "pypi", "--index-url", index], env)
        expect_error(proc, 2, "CUDA 12.8.1 from a package index has no nvcc", "ptxas")
        check("add --runtime-only" in proc.stderr and "--source redist" in proc.stderr, f"the hint: {proc.stderr!r}")
        check(not (tmp / "root" / "toolkits" / "12.8.1").exists(), "nothing installed without --runtime-only")
        proc = run(["install", "12.8.1", "--source", "pypi", "--runtime-only", "--index-url", index], env,
                   check_exit=0)
    check("runtime-only" in proc.stderr, f"install says what it installed: {proc.stderr!r}")
    prefix = tmp / "root" / "toolkits" / "12.8.1"
    check((prefix / "lib" / "libcudart.so.12").is_file() and (prefix / "bin" / "ptxas").is_file(),
          "the cu12 trees merge into one prefix")
    listed = run(["list"], env, check_exit=0).stdout
    check("12.8.1 (runtime only: no nvcc)" in listed, f"list marks it: {listed!r}")
    proc = run(["verify", "12.8.1"], env)
    expect_error(proc, 7, "is runtime-only", "nothing to compile")
    check("--source redist" in proc.stderr, f"the hint: {proc.stderr!r}")
    proc = run(["install", "12.8.1", "--runtime-only"], env)
    expect_error(proc, 2, "--runtime-only", "--source pypi")
    runtime_only_prefix_presents_no_compiler(tmp, env, prefix)


@case
def list_remote_and_use_install_take_the_index(tmp):
    env = env_for(tmp)
    with index_server(wheels_of(tmp)) as (index, _):
        listed = run(["list-remote", "--source", "pypi", "--index-url", index], env, check_exit=0)
        check(listed.stdout.split() == ["13.0.2", "12.8.1"], f"the index's cuda-toolkit releases: {listed.stdout!r}")
        data = json.loads(run(["list-remote", "--index-url", index, "--json"], env, check_exit=0).stdout)
        check(data["source"] == "pypi" and data["index"] == index and "mirror" not in data,
              f"JSON names the index it read, not a mirror: {data}")
        cudnn = run(["list-remote", "--cudnn", "--index-url", index], env, check_exit=0).stdout.split()
        check(cudnn == ["9.14.0", "9.13.0"], f"cuDNN releases from the nvidia-cudnn-cu* wheels: {cudnn}")
        project = tmp / "project"
        project.mkdir()
        alone = subprocess.run([BINARY, "use", "13.0.2", "--source", "pypi"], cwd=project, env=env,
                               capture_output=True, text=True)
        expect_error(alone, 2, "--source says where --install downloads from")
        check("add --install" in alone.stderr, f"the hint: {alone.stderr!r}")
        check(not (project / ".cudaenv").exists(), "nothing written for a flag that does nothing")
        used = subprocess.run([BINARY, "use", "13.0.2", "--install", "--source", "pypi", "--index-url", index],
                              cwd=project, env=env, capture_output=True, text=True)
        check(used.returncode == 0, f"use --install from the index: {used.stderr!r}")
        check(f"from the index {index} (set by --index-url)) in " in used.stdout,
              f"use --install names the index and where it was set: {used.stdout!r}")
    check(receipt_of(tmp / "root" / "toolkits" / "13.0.2")["source"] == "pypi",
          "use --install took the toolkit from the index")
    # An index chosen by the config, which has neither cuda-toolkit nor any release's cudart: the
    # error says where it was set.
    cudnn_only = tmp / "cudnn-only"
    cudnn_wheel(cudnn_only, 13, "9.14.0.64")
    with index_server(cudnn_only) as (index, _):
        config = global_config(env, f'source = "pypi"\nindex_url = "{index}"\n')
        proc = run(["list-remote"], env)
        expect_error(proc, 3, f"no project cuda-toolkit on the index {index}",
                     "nor the cudart wheel of any release the database knows", f"(index set by index_url in {config})")


@case
def config_and_pip_index_url_choose_the_index(tmp):
    env = env_for(tmp)
    with index_server(wheels_of(tmp)) as (index, _):
        global_config(env, 'source = "pypi"\n')
        proc = run(["install", "13.0.2", "--components", "cuda_nvcc,nvidia-cuda-runtime"],
                   {**env, "PIP_INDEX_URL": index}, check_exit=0)
    check(f"from the index {index} (set by PIP_INDEX_URL)) in " in proc.stdout,
          f"the result names the index and where it was set: {proc.stdout!r}")
    prefix = tmp / "root" / "toolkits" / "13.0.2"
    check(receipt_of(prefix)["mirror"] == index, "PIP_INDEX_URL was used")
    check(sorted(c["name"] for c in receipt_of(prefix)["components"]) == ["cuda_cudart", "cuda_nvcc"],
          "a list names components by redist key or wheel")
    config = global_config(env, 'source = "conda"\n')
    proc = run(["install", "13.0.2", "--force"], env)
    expect_error(proc, 2, f"source in {config}", '"conda" is not a source')
    check("redist" in proc.stderr and "pypi" in proc.stderr, f"the hint names both: {proc.stderr!r}")


@case
def mirror_create_from_an_index_serves_ordinary_installs(tmp):
    env = env_for(tmp)
    mirror = tmp / "mirror"
    with index_server(wheels_of(tmp)) as (index, _):
        proc = run(["mirror", "create", str(mirror), "--cuda", "13.0.2", "--components", "minimal",
                    "--cudnn", "9.14", "--source", "pypi", "--index-url", index], env, check_exit=0)
    check("repacked" in proc.stdout, f"says where it came from: {proc.stdout!r}")
    partial = [p.name for p in mirror.rglob("*.partial-*")]
    check(not partial, f"each archive written under a temporary name and renamed: {partial}")
    manifest = json.loads((mirror / "cuda" / "redist" / "redistrib_13.0.2.json").read_text())
    check(manifest["cuda_nvcc"]["version"] == "13.0.88" and "cuda_cudart" in manifest
          and "libcublas" not in manifest, f"the minimal components, in NVIDIA's layout: {list(manifest)}")
    cudnn = json.loads((mirror / "cudnn" / "redist" / "redistrib_9.14.0.json").read_text())["cudnn"]
    check(sorted(cudnn["cuda_variant"]) == ["12", "13"], f"both CUDA variants of cuDNN: {cudnn}")
    offline = dict(env, CUDAENV_ROOT=str(tmp / "offline"))
    run(["install", "13.0.2", "--cudnn", "9.14", "--mirror", mirror.as_uri()], offline, check_exit=0)
    prefix = tmp / "offline" / "toolkits" / "13.0.2"
    nvcc = subprocess.run([str(prefix / "bin" / "nvcc"), "--version"], capture_output=True, text=True)
    check("V13.0.88" in nvcc.stdout, f"the mirror's toolkit runs: {nvcc.stdout!r}")
    check((tmp / "offline" / "cudnn" / "9.14.0-cuda13" / "lib" / "libcudnn.so.9").read_text()
          == "cudnn for cuda13", "cuDNN for the toolkit's major from the mirror")
    check(receipt_of(prefix)["source"] == "redist", "installed from the mirror as redist archives")


finish()
