"""NVIDIA's CUDA forward compatibility (docs/forward-compat.md): `compat install` takes
cuda-compat-X-Y from an apt repository of NVIDIA's layout (a loopback one here, its Packages index
giving the sha256), unpacks the library into the store, and the hook, `env` and `exec` put it
first on LD_LIBRARY_PATH only where NVIDIA's rule and the library's own note say it runs: a kernel
module older than the library, of a branch the note lists, on data-center GPUs. The machines are
fixture machines whose /proc says which module is loaded and which GPUs it drives."""

import json
import shutil
import sys
from pathlib import Path

from compat_packages import apt_repository, compat_deb, compat_library
from harness import (DEBIAN_PATH, SKIP, case, check, expect_error, finish, fixture_machine,
                     install_synthetic_toolkits, mirror_server, run, run_in)

if not shutil.which("dpkg-deb") or not shutil.which("cc"):
    print("skip: dpkg-deb and cc build the compat packages")
    sys.exit(SKIP)

H100 = "NVIDIA H100 80GB HBM3"
GEFORCE = "NVIDIA GeForce RTX 4090"


CAPABILITY = {H100: "9.0", GEFORCE: "8.9"}


def machine(tmp, module, gpus):
    """dgx-h100-580 with this kernel module loaded, driving these GPUs (the /proc files and the
    fixture driver library say the same)."""
    root = fixture_machine("dgx-h100-580", tmp / "machines")
    ini = root / "usr/lib/x86_64-linux-gnu/fake-driver.ini"
    ini.write_text(f"driver_version={module}\ncuda_version=13000\n" +
                   "".join(f"gpu={gpu}|{CAPABILITY[gpu]}|85520809984\n" for gpu in gpus) +
                   "cuinit_error=999\n")
    (root / "proc/driver/nvidia/version").write_text(
        f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {module}  Release Build  "
        "(dvs-builder@U22-I3-AE18-23-3)  Tue Sep 23 09:55:41 UTC 2025\n")
    for index, model in enumerate(gpus):
        info = root / f"proc/driver/nvidia/gpus/0000:{index + 0x18:02x}:00.0/information"
        info.parent.mkdir(parents=True)
        info.write_text(f"Model: \t\t {model}\nIRQ:   \t\t 64\nBus Type: \t PCIe\n")
    return root


def repository(tmp, **deb_options):
    repo = tmp / "repo"
    repo.mkdir(exist_ok=True)
    old = compat_deb(repo, "12.8", "570.86.10", [470, 535, 550])
    new = compat_deb(repo, "12.8", "570.124.06", [470, 535, 550], **deb_options)
    apt_repository(repo, [old, new])
    return repo


def project(tmp, env):
    repo = tmp / "project"
    repo.mkdir()
    run_in(["use", "12.4"], env, repo, expect=0)
    return repo


def library_path(env, cwd):
    out = run_in(["exec", "--", "/bin/sh", "-c", 'printf %s "$LD_LIBRARY_PATH"'], env, cwd,
                 expect=0).stdout
    return out.split(":")


def setup(tmp, module="535.104.05", gpus=(H100, H100)):
    env = install_synthetic_toolkits(tmp)
    env["CUDAENV_SYSROOT"] = str(machine(tmp, module, gpus))
    env["PATH"] = DEBIAN_PATH
    return env


@case
def installs_the_newest_package_and_puts_it_first_on_an_older_module(tmp):
    env = setup(tmp)
    repo = repository(tmp)
    with mirror_server(repo) as (url, faults):
        out = run(["compat", "install", "12.8", "--repo", url], env, check_exit=0).stdout
        log = Path(str(faults) + ".log").read_text()
    check("cuda-compat-12-8 570.124.06-0ubuntu1 (libcuda 570.124.06)" in out, out)
    check("used here" in out and "535.104.05" in out, out)
    check("570.86.10" not in log, f"only the newest package is downloaded: {log}")
    lib = Path(env["CUDAENV_ROOT"]) / "compat/12.8/lib"
    check((lib / "libcuda.so.570.124.06").is_file() and (lib / "libcuda.so.1").is_symlink(),
          f"the library and its soname link: {sorted(p.name for p in lib.iterdir())}")
    check(not any(Path(env["CUDAENV_ROOT"]).rglob("copyright")), "files outside compat/ stay out")
    paths = library_path(env, project(tmp, env))
    check(paths[0] == str(lib), f"the compat library goes first: {paths}")
    check(any(p.endswith("/toolkits/12.4.1/lib64") for p in paths), paths)
    listed = run(["compat", "list"], env, check_exit=0).stdout
    check("CUDA 12.8  libcuda 570.124.06" in listed and "used here" in listed, listed)


@case
def a_newer_module_keeps_it_out_and_says_why(tmp):
    # The GPU machine's own case: its module (580.159.04) is newer than the compat library.
    env = setup(tmp, module="580.159.04")
    with mirror_server(repository(tmp)) as (url, _):
        out = run(["compat", "install", "12.8", "--repo", url], env, check_exit=0).stdout
    check("not used here" in out and "580.159.04 is not older" in out and "803" in out, out)
    paths = library_path(env, project(tmp, env))
    check(not any("/compat/" in p for p in paths), f"never first on a newer module: {paths}")


@case
def a_branch_the_note_does_not_list_keeps_it_out(tmp):
    env = setup(tmp, module="525.147.05")
    with mirror_server(repository(tmp)) as (url, _):
        run(["compat", "install", "12.8", "--repo", url], env, check_exit=0)
    listed = run(["compat", "list"], env, check_exit=0).stdout
    check("branches 470, 535, 550" in listed and "525.147.05" in listed, listed)
    check(not any("/compat/" in p for p in library_path(env, project(tmp, env))), "not on 525")


@case
def geforce_is_refused_and_an_unapproved_gpu_keeps_it_out(tmp):
    env = setup(tmp, gpus=(GEFORCE,))
    with mirror_server(repository(tmp)) as (url, _):
        proc = run(["compat", "install", "12.8", "--repo", url], env)
        expect_error(proc, 4, "RTX 4090 is not a data-center GPU", "804")
        check(not (Path(env["CUDAENV_ROOT"]) / "compat/12.8").exists(), "nothing installed")
        # A store shared by a cluster: installed for H100 nodes, then read on a GeForce one.
        run(["compat", "install", "12.8", "--repo", url, "--gpu", "H100"], env, check_exit=0)
    paths = library_path(env, project(tmp, env))
    check(not any("/compat/" in p for p in paths), f"not on a GPU it was not installed for: {paths}")
    listed = run(["compat", "list"], env, check_exit=0).stdout
    check("RTX 4090 is not a data-center GPU" in listed and "804" in listed, listed)


@case
def a_package_the_index_does_not_vouch_for_installs_nothing(tmp):
    env = setup(tmp)
    repo = tmp / "repo"
    repo.mkdir()
    deb = compat_deb(repo, "12.8", "570.124.06", [535])
    apt_repository(repo, [deb], sha256_of={deb.name: "0" * 64})
    with mirror_server(repo) as (url, _):
        expect_error(run(["compat", "install", "12.8", "--repo", url], env), 6, "checksum mismatch")
    check(not (Path(env["CUDAENV_ROOT"]) / "compat").exists()
          or not any((Path(env["CUDAENV_ROOT"]) / "compat").iterdir()), "nothing installed")


@case
def a_library_whose_note_names_another_cuda_installs_nothing(tmp):
    env = setup(tmp)
    for label, options, needle in [("other", {"note_cuda": "12.9"}, "names CUDA 12.9"),
                                   ("none", {"note": False}, "has no .note.cuda.fwd_compatibility")]:
        repo = tmp / label
        repo.mkdir()
        deb = compat_deb(repo, "12.8", "570.124.06", [535], **options)
        apt_repository(repo, [deb])
        with mirror_server(repo) as (url, _):
            expect_error(run(["compat", "install", "12.8", "--repo", url], env), 6, needle)
        check(not (Path(env["CUDAENV_ROOT"]) / "compat/12.8").exists(), f"{label}: nothing installed")


@case
def hostile_index_fields_are_refused(tmp):
    env = setup(tmp)
    repo = tmp / "repo"
    repo.mkdir()
    deb = compat_deb(repo, "12.8", "570.124.06", [535])
    apt_repository(repo, [deb])
    packages = repo / "Packages"
    packages.write_text(packages.read_text().replace(f"./{deb.name}", f"../../{deb.name}"))
    with mirror_server(repo) as (url, _):
        expect_error(run(["compat", "install", "12.8", "--repo", url], env), 6, "Filename")
        expect_error(run(["compat", "install", "13.9", "--repo", url], env), 3, "no package cuda-compat-13-9")
    expect_error(run(["compat", "install", "twelve", "--repo", url], env), 2, "is not a CUDA version")


def resolved(env, *flags, expect=0):
    proc = run(["resolve", "--json", *flags], env)
    check(proc.returncode == expect, f"resolve {flags}: exit {proc.returncode}: {proc.stderr}")
    return json.loads(proc.stdout)


@case
def resolve_offers_forward_compatibility_on_a_data_center_gpu(tmp):
    env = setup(tmp)
    # The case: CUDA 12.8 on driver 535 on an H100.
    answer = resolved(env, "--no-detect", "--cuda", "12.8", "--driver", "535.104.05", "--gpu", "H100")
    check(answer["cuda"]["driver_mode"] == "forward-compat", answer["cuda"])
    check(answer["driver"]["forward_compat"] == {
        "package": "cuda-compat-12-8", "library": "570.124.06",
        "install": "cudaenv compat install 12.8"}, answer["driver"])
    check(any("cudaenv compat install 12.8" in w and "without a driver upgrade" in w and
              "without it, minor-version compatibility runs it with limits" in w
              for w in answer["warnings"]), answer["warnings"])
    # On a GeForce card the same driver keeps minor-version compatibility, and no package.
    geforce = resolved(env, "--no-detect", "--cuda", "12.8", "--driver", "535.104.05", "--gpu",
                       "RTX 4090")
    check(geforce["cuda"]["driver_mode"] == "minor-compat" and
          geforce["driver"]["forward_compat"] is None, geforce["cuda"])
    # CUDA 13.0 on 535: too old even for minor-version compatibility; the package runs it.
    thirteen = resolved(env, "--no-detect", "--cuda", "13.0", "--driver", "535.104.05", "--gpu",
                        "H100")
    check(thirteen["cuda"]["driver_mode"] == "forward-compat" and
          thirteen["driver"]["forward_compat"]["package"] == "cuda-compat-13-0", thirteen["cuda"])
    text = run(["resolve", "--no-detect", "--cuda", "12.8", "--driver", "535.104.05", "--arch",
                "9.0"], env, check_exit=0).stdout
    check("[forward-compat]" in text and "cudaenv compat install 12.8" in text,
          f"every model of sm_90 is a data-center GPU: {text}")
    # Detected: the kernel names the machine's GPUs (two H100s) and its module (535).
    detected = resolved(env, "--cuda", "12.8")
    check(detected["cuda"]["driver_mode"] == "forward-compat", detected)
    # Without a pin, a toolkit the driver fully supports is preferred.
    best = resolved(env, "--no-detect", "--driver", "535.104.05", "--gpu", "H100")
    check(best["cuda"]["driver_mode"] == "full" and best["cuda"]["version"].startswith("12.2"),
          best["cuda"])


@case
def resolve_says_why_forward_compatibility_does_not_apply(tmp):
    env = setup(tmp)
    # CUDA 13 on branch 535: below 13's minor-compatibility floor (580), where only the package
    # could run it.
    cases = [
        (["--cuda", "13.0", "--driver", "535.104.05", "--gpu", "RTX 4090"],
         "RTX 4090 is not a data-center GPU", "804"),
        (["--cuda", "13.0", "--driver", "535.104.05", "--arch", "8.6"],
         "sm_86 GPUs include the", "--gpu"),
        (["--cuda", "13.0", "--driver", "535.104.05"], "only on data-center GPUs", "--gpu H100"),
        (["--cuda", "13.0", "--driver", "525.147.05", "--gpu", "H100"],
         "cuda-compat-13-0 supports driver branches 535, 550, 565, 570, 575, 580, not 525", ""),
    ]
    for flags, *needles in cases:
        answer = resolved(env, "--no-detect", *flags, expect=4)
        reasons = " | ".join(r["reason"] for r in answer["rejected"])
        check(all(n in reasons for n in needles) and "forward compatibility: " in reasons,
              f"{flags}: {reasons}")
    expect_error(run(["resolve", "--gpu", "H1000"], env), 2, "--gpu", "knows no GPU")


def doctor(env, cwd=None):
    proc = run_in(["doctor", "--json"], env, cwd or Path(env["HOME"]))
    findings = {f["id"]: f for f in json.loads(proc.stdout)["findings"]}
    return findings


@case
def doctor_sees_nvidia_s_compat_library_and_fails_when_a_newer_module_meets_it_first(tmp):
    # The GPU machine's image: cuda-compat-13-0 (libcuda 580.95.05), module 580.159.04.
    env = setup(tmp, module="580.159.04")
    root = Path(env["CUDAENV_SYSROOT"])
    compat_library(root / "usr/local/cuda-13.0/compat", "580.95.05", "13.0",
                   [535, 550, 565, 570, 575, 580])
    found = doctor(env)["forward-compat"]
    check(found["status"] == "ok" and "/usr/local/cuda-13.0/compat is not used, rightly" in
          found["summary"] and "580.159.04 is not older" in found["summary"], found)
    check(any("libcuda 580.95.05 (NVIDIA's cuda-compat package), CUDA 13.0, kernel-module "
              "branches 535, 550, 565, 570, 575, 580" in e for e in found["evidence"]), found)
    env["LD_LIBRARY_PATH"] = "/usr/local/cuda-13.0/compat"
    first = doctor(env)["forward-compat"]
    check(first["status"] == "fail" and "on the loader's path (LD_LIBRARY_PATH)" in
          first["summary"] and "803" in first["summary"], first)
    check(first["fix"] == ["unset LD_LIBRARY_PATH"], first["fix"])


@case
def doctor_counts_a_driver_too_old_as_served_once_the_library_goes_first(tmp):
    env = setup(tmp, module="470.256.02")
    repo = project(tmp, env)
    before = doctor(env, repo)["driver-toolkit"]
    check(before["status"] == "fail" and before["fix"][:1] == ["cudaenv compat install 12.4"],
          f"on H100s on branch 470 the package comes first: {before}")
    with mirror_server(repository(tmp)) as (url, _):
        run(["compat", "install", "12.8", "--repo", url], env, check_exit=0)
    after = doctor(env, repo)
    check(after["driver-toolkit"]["status"] == "ok" and
          "forward compatibility serves it" in after["driver-toolkit"]["summary"],
          after["driver-toolkit"])
    check(after["forward-compat"]["status"] == "ok", after["forward-compat"])


finish()
