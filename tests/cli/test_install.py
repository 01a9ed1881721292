"""`cudaenv install`, `list`, `list-remote` and `uninstall` against a real local HTTP server
serving a synthetic mirror in NVIDIA's layout. Faults are in test_install_faults.py, hostile
archives in test_install_safety.py, `mirror create` in test_mirror.py."""

import hashlib
import json
import os

from harness import case, check, clean_env, finish, mirror_server, run, expect_error
from synthetic_mirror import PLATFORM, cudnn_release, pack, toolkit_release, write_release


def env_for(tmp, **extra):
    # An empty sysroot: the platform is linux-x86_64 and no toolkit of this machine shows up.
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", **extra)


def store_entries(tmp, kind="toolkits"):
    directory = tmp / "root" / kind
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def release_with_libraries(root, version):
    """A toolkit with one library beyond the minimal set, to tell the presets apart."""
    nvcc = ("12.4.131", [("bin/nvcc", "#!/bin/sh\n", 0o755)], 0)
    return write_release(root, version, {
        "cuda_nvcc": nvcc,
        "cuda_cudart": ("12.4.127", [("lib/libcudart.so.12", "elf", 0o644)], 0),
        "cuda_cccl": ("12.4.127", [("include/cub/cub.cuh", "/* cub */\n", 0o644)], 0),
        "libcublas": ("12.4.5.8", [("lib/libcublas.so.12", "elf", 0o644)], 0),
        "nvidia_driver": ("550.54.15", [("bin/nvidia-smi", "#!/bin/sh\n", 0o755)], 0),
    })


def requests(faults):
    """The server's request log: (method, path, range header or "-")."""
    log = faults.parent / (faults.name + ".log")
    return [tuple(line.split(" ", 2)) for line in log.read_text().splitlines()] if log.exists() else []


def receipt_components(prefix):
    receipt = json.loads((prefix / "cudaenv-receipt.json").read_text())
    return sorted(c["name"] for c in receipt["components"])


@case
def installs_from_an_http_mirror_and_reinstall_is_a_no_op(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp)
        proc = run(["install", "12.4", "--mirror", url], env, check_exit=0)
        prefix = tmp / "root" / "toolkits" / "12.4.1"
        check("installed CUDA 12.4.1" in proc.stdout, proc.stdout)
        check(os.access(prefix / "bin" / "nvcc", os.X_OK), "nvcc is executable")
        check((prefix / "lib64").is_symlink() and (prefix / "lib64" / "libcudart.so.12").exists(),
              "lib64 leads to lib")
        check(not (prefix / "bin" / "nvidia-smi").exists(), "driver-side components are not installed")
        check((prefix / "share" / "licenses" / "cuda_nvcc" / "LICENSE").is_file(), "licenses kept apart")
        check(receipt_components(prefix) == ["cuda_cccl", "cuda_cudart", "cuda_nvcc"], "receipt lists the components")
        version = json.loads((prefix / "version.json").read_text())
        check(version["cuda"]["version"] == "12.4.1", "version.json written in NVIDIA's shape")
        check(store_entries(tmp) == [".lock-12.4.1", "12.4.1"], f"store: {store_entries(tmp)}")
        again = run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        check("already installed" in again.stdout, again.stdout)
        forced = run(["install", "12.4.1", "--force", "--mirror", url], env, check_exit=0)
        check("installed CUDA 12.4.1" in forced.stdout, forced.stdout)
        check(store_entries(tmp) == [".lock-12.4.1", "12.4.1"], f"--force leaves one prefix: {store_entries(tmp)}")


@case
def list_and_list_remote_in_text_and_json(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    cudnn_release(tmp / "mirror", "8.9.7", "8.9.7.29", variants=("11", "12"))
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        empty = run(["list"], env, check_exit=0)
        check(empty.stdout.splitlines()[:2] == ["Installed by cudaenv", "  (none)"], empty.stdout)
        run(["install", "12.4.1", "--cudnn", "9"], env, check_exit=0)
        text = run(["list"], env, check_exit=0).stdout
        prefix = tmp / "root" / "toolkits" / "12.4.1"
        check(f"  12.4.1  {prefix}" in text.splitlines(), text)
        check(f"  9.1.0 (cuda12)  {tmp / 'root' / 'cudnn' / '9.1.0-cuda12'}" in text.splitlines(), text)
        listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)
        check([(t["version"], t["path"], t["components"]) for t in listed["installed"]] ==
              [("12.4.1", str(prefix), ["cuda_cccl", "cuda_cudart", "cuda_nvcc"])], f"list --json: {listed}")
        check(listed["installed"][0]["mirror"] == url, f"the receipt names the mirror: {listed}")
        check([(c["version"], c["variant"]) for c in listed["cudnn"]] == [("9.1.0", "cuda12")], f"cudnn: {listed}")
        check(listed["system"] == [], f"no system toolkit in an empty sysroot: {listed}")

        remote = run(["list-remote"], env, check_exit=0)
        check(remote.stdout.splitlines() == ["12.6.3", "12.4.1  (installed)"], remote.stdout)
        check(remote.stderr == "", remote.stderr)
        remote_json = json.loads(run(["list-remote", "--json"], env, check_exit=0).stdout)
        check(remote_json == {"source": "redist", "mirror": url, "product": "cuda",
                              "versions": [{"version": "12.6.3", "installed": False},
                                           {"version": "12.4.1", "installed": True}]}, f"{remote_json}")
        cudnn = run(["list-remote", "--cudnn"], env, check_exit=0)
        check(cudnn.stdout.splitlines() == ["9.1.0  (installed)", "8.9.7"], cudnn.stdout)
        cudnn_json = json.loads(run(["list-remote", "--cudnn", "--json"], env, check_exit=0).stdout)
        check(cudnn_json["product"] == "cudnn" and [v["version"] for v in cudnn_json["versions"]] == ["9.1.0", "8.9.7"],
              f"{cudnn_json}")


@case
def uninstall_removes_then_reports_not_installed(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, faults):
        env = env_for(tmp)
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        requests_before = len(requests(faults))
        proc = run(["uninstall", "12.4.1"], env, check_exit=0)
        check(proc.stdout == "removed CUDA 12.4.1\n", proc.stdout)
        check("12.4.1" not in store_entries(tmp), f"store: {store_entries(tmp)}")
        check(not any(n.startswith(".old-") for n in store_entries(tmp)), f"store: {store_entries(tmp)}")
        expect_error(run(["uninstall", "12.4.1"], env), 3, "CUDA 12.4.1 is not installed")
        expect_error(run(["uninstall", "banana"], env), 2, "SPEC", "banana")
        # The download cache survives an uninstall: a re-install needs no archive request.
        again = run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        check("installed CUDA 12.4.1" in again.stdout, again.stdout)
        fetched = [path for _, path, _ in requests(faults)[requests_before:] if path.endswith(".tar.xz")]
        check(fetched == [], f"archives fetched again: {fetched}")


@case
def uninstall_never_touches_a_cudnn_or_another_version(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        run(["install", "12.4.1"], env, check_exit=0)
        run(["install", "12.6.3"], env, check_exit=0)
        expect_error(run(["uninstall", "12.5"], env), 3, "12.5")
        run(["uninstall", "12.6.3"], env, check_exit=0)
        listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)
        check([t["version"] for t in listed["installed"]] == ["12.4.1"], f"{listed}")


@case
def component_presets_and_lists(tmp):
    release_with_libraries(tmp / "mirror", "12.4.1")
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        prefix = tmp / "root" / "toolkits" / "12.4.1"
        run(["install", "12.4.1", "--components", "minimal"], env, check_exit=0)
        check(receipt_components(prefix) == ["cuda_cccl", "cuda_cudart", "cuda_nvcc"], "minimal")
        check(not (prefix / "lib" / "libcublas.so.12").exists(), "minimal leaves the libraries out")
        run(["install", "12.4.1", "--force", "--components", "cuda_nvcc, libcublas"], env, check_exit=0)
        check(receipt_components(prefix) == ["cuda_nvcc", "libcublas"], "an explicit list")
        check((prefix / "lib" / "libcublas.so.12").exists() and not (prefix / "lib" / "libcudart.so.12").exists(),
              "exactly the listed components")
        run(["install", "12.4.1", "--force"], env, check_exit=0)
        check(receipt_components(prefix) == ["cuda_cccl", "cuda_cudart", "cuda_nvcc", "libcublas"],
              "full: everything but the driver")
        unknown = run(["install", "12.4.1", "--force", "--components", "cuda_nvcc,cuda_banana"], env)
        expect_error(unknown, 2, "--components", "cuda_banana")
        check("hint: components: cuda_cccl,cuda_cudart,cuda_nvcc,libcublas\n" in unknown.stderr, unknown.stderr)
        check(receipt_components(prefix) == ["cuda_cccl", "cuda_cudart", "cuda_nvcc", "libcublas"],
              "a usage error leaves the installed toolkit alone")


@case
def a_release_the_database_does_not_know_installs_with_a_warning(tmp):
    toolkit_release(tmp / "mirror", "99.1.0", "99.1.10")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run(["install", "99.1", "--mirror", url], env_for(tmp), check_exit=0)
        warnings = [line for line in proc.stderr.splitlines() if line.startswith("cudaenv: warning:")]
        check(len(warnings) == 1 and "CUDA 99.1.0" in warnings[0] and "compatibility database" in warnings[0],
              proc.stderr)
        check((tmp / "root" / "toolkits" / "99.1.0" / "cudaenv-receipt.json").is_file(), "installed")
        known = run(["install", "12.4.1", "--mirror", url], env_for(tmp))
        expect_error(known, 3, "12.4.1")
        check("newest offered: 99.1.0" in known.stderr, known.stderr)


@case
def cudnn_installs_the_build_for_the_toolkits_cuda_major(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70", variants=("12", "13"))
    cudnn_release(tmp / "mirror", "9.2.0", "9.2.0.82", variants=("13",))
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        expect_error(run(["install", "12.4.1", "--cudnn", "banana"], env), 2, "--cudnn")
        check(store_entries(tmp) == [], f"a bad --cudnn is refused before any download: {store_entries(tmp)}")
        proc = run(["install", "12.4.1", "--cudnn", "9"], env, check_exit=0)
        check(proc.stdout.splitlines()[1].startswith("installed cuDNN 9.1.0 (1 archives"), proc.stdout)
        prefix = tmp / "root" / "cudnn" / "9.1.0-cuda12"
        check((prefix / "lib" / "libcudnn.so.9").read_text() == "cudnn for cuda12", "the cuda12 build")
        check((prefix / "lib64").is_symlink(), "lib64 as in a toolkit")
        check((prefix / "share" / "licenses" / "cudnn" / "LICENSE").is_file(), "license kept")
        receipt = json.loads((prefix / "cudaenv-receipt.json").read_text())
        check(receipt["product"] == "cudnn" and receipt["variant"] == "cuda12", f"{receipt}")
        check(not (prefix / "version.json").exists(), "version.json is for toolkits only")
        # verify finds the cuDNN by version among those installed, expecting what its receipt says.
        report = json.loads(run(["verify", "12.4.1", "--cudnn", "9.1", "--json"], env).stdout)
        check(report["cudnn"]["library"] == str(prefix / "lib64" / "libcudnn.so.9"), f"verify's cuDNN: {report['cudnn']}")
        check(report["cudnn"]["expected"] == 90100 and report["cudnn"]["header"].endswith("cudaenv-receipt.json"),
              f"expected version from the receipt: {report['cudnn']}")
        missing = run(["verify", "12.4.1", "--cudnn", "8.9", "--json"], env)
        check(missing.returncode == 3 and "cudaenv install" in missing.stderr, f"not installed: {missing.stderr}")
        check(store_entries(tmp, "cudnn") == [".lock-9.1.0-cuda12", "9.1.0-cuda12"], f"{store_entries(tmp, 'cudnn')}")
        again = run(["install", "12.4.1", "--cudnn", "9.1"], env, check_exit=0)
        check(again.stdout.splitlines() == [
            f"CUDA 12.4.1 is already installed in {tmp / 'root' / 'toolkits' / '12.4.1'} (--force reinstalls)",
            f"cuDNN 9.1.0 is already installed in {prefix} (--force reinstalls)"], again.stdout)
        expect_error(run(["install", "12.4.1", "--cudnn", "9.2"], env), 3, "no cuDNN release matching", "cuda12")


@case
def malformed_manifests_are_refused_with_their_url(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    redist = tmp / "mirror" / "cuda" / "redist"
    (redist / "redistrib_12.5.0.json").write_text('{"release_date": "2024-01-01", "cuda_nvcc": {')
    hostile = toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    hostile["cuda_nvcc"][PLATFORM]["relative_path"] = "../../x"
    (redist / "redistrib_12.6.3.json").write_text(json.dumps(hostile))
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        expect_error(run(["install", "12.5.0"], env), 1,
                     f"{url}/cuda/redist/redistrib_12.5.0.json: not a redistrib manifest (invalid JSON)")
        expect_error(run(["install", "12.6.3"], env), 6,
                     f"{url}/cuda/redist/redistrib_12.6.3.json: cuda_nvcc.{PLATFORM}: unsafe relative_path \"../../x\"")
        check(store_entries(tmp) == [], f"nothing installed: {store_entries(tmp)}")
        expect_error(run(["install", "not-a-version"], env), 2, "SPEC")
        run(["install", "12.4.1"], env, check_exit=0)


@case
def progress_only_on_a_terminal(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=50_000)
    with mirror_server(tmp / "mirror") as (url, _):
        quiet = run(["install", "12.4.1", "--mirror", url], env_for(tmp), check_exit=0)
        check(quiet.stderr == "", f"no progress off a terminal: {quiet.stderr!r}")
        check(quiet.stdout.count("\n") == 1 and quiet.stdout.startswith("installed CUDA 12.4.1 (3 archives"),
              quiet.stdout)
        shown = run(["install", "12.4.1", "--force", "--mirror", url], env_for(tmp, CUDAENV_PROGRESS="1"),
                    check_exit=0)
        for name in ("cuda_nvcc", "cuda_cudart", "cuda_cccl"):
            check(any(name in line and "done" in line for line in shown.stderr.splitlines()),
                  f"a line for {name}: {shown.stderr!r}")
        check(any("total" in line and "ETA" in line and "100%" in line for line in shown.stderr.splitlines()),
              f"a total line: {shown.stderr!r}")
        check(shown.stdout.startswith("installed CUDA 12.4.1") and shown.stdout.count("\n") == 1, shown.stdout)


finish()
