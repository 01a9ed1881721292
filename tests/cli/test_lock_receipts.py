"""Receipts in .cudaenv.lock: `cudaenv verify --record` on a fixture machine (two H100s, driver 580,
through the fake driver library) with a stand-in CUDA 13.0.2 whose device-query program passes,
stores a receipt under the target the machine matches; `lock --check` stays clean; a change of the
locked set drops the receipt. Also the implicit target (no [targets]): a fixture machine with GPUs
locks `this-machine` with its driver and arch, and a machine without a GPU can still check it."""

import hashlib
import json
import re
import shutil
import sys
import tomllib

from harness import DEBIAN_PATH, FAKE_DRIVER, FIXTURES, SKIP, case, check, clean_env, expect_error, finish, fixture_machine
from harness import mirror_server, run_in
from synthetic_mirror import toolkit_release

if not FAKE_DRIVER:
    print("skip: fixture machines need the fake driver library")
    sys.exit(SKIP)

PROJECT = """cuda = "13.0"
[targets.a100]
driver = "580.65.06"
arch = ["8.0"]
[targets.h100]
driver = "580.65.06"
arch = ["9.0"]
"""
# What the device-query program prints on the fixture's two H100s when everything passes.
PASSING_RUN = [
    "versions driver=13000 runtime=13000",
    "devices count=2",
    "gpu index=0 cc=9.0 sms=132 memory=85520809984 name=NVIDIA H100 80GB HBM3",
    "kernel gpu=0 status=ok elements=1048576",
    "bandwidth gpu=0 device_to_device_gbs=2890.4 bytes=268435456 repeats=20",
    "gpu index=1 cc=9.0 sms=132 memory=85520809984 name=NVIDIA H100 80GB HBM3",
    "kernel gpu=1 status=ok elements=1048576",
    "bandwidth gpu=1 device_to_device_gbs=2887.9 bytes=268435456 repeats=20",
    "done status=ok",
]

cudaenv = run_in  # cudaenv ARGS in a directory, with an optional expected exit


def passing_toolkit(root):
    """The no-kernel-image stand-in (CUDA 13.0.2) with an nvcc whose program passes instead."""
    prefix = root / "toolkits" / "13.0.2"
    shutil.copytree(FIXTURES / "toolkits" / "no-kernel-image", prefix, symlinks=True)
    nvcc = prefix / "bin" / "nvcc"
    script = nvcc.read_text()
    start, end = script.index("  echo 'echo \"versions"), script.index("  echo 'exit 1'")
    lines = "".join(f"  echo 'echo \"{line}\"'\n" for line in PASSING_RUN)
    nvcc.write_text(script[:start] + lines + "  echo 'exit 0'" + script[end + len("  echo 'exit 1'"):])


def machine_env(tmp, url, with_gpu=True):
    if with_gpu:
        sysroot = fixture_machine("dgx-h100-580", tmp / "machines")
    else:
        sysroot = tmp / "empty-machine"
        sysroot.mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_SYSROOT=sysroot, CUDAENV_ROOT=tmp / "cudaenv", PATH=DEBIAN_PATH,
                     CUDAENV_MIRROR=url, CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2)


def project_in(tmp, text):
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(text)
    return project


def locked(project):
    return tomllib.loads((project / ".cudaenv.lock").read_text())


@case
def verify_record_stores_a_receipt_that_holds_until_the_locked_set_changes(tmp):
    toolkit_release(tmp / "mirror", "13.0.2", "13.0.88")
    toolkit_release(tmp / "mirror", "13.0.1", "13.0.48")
    passing_toolkit(tmp / "cudaenv")
    project = project_in(tmp, PROJECT)
    with mirror_server(tmp / "mirror") as (url, _):
        env = machine_env(tmp, url)
        cudaenv(["lock"], env, project, expect=0)
        check(locked(project)["toolkit"]["version"] == "13.0.2", str(locked(project)["toolkit"]))
        proc = cudaenv(["verify", "13.0.2", "--record", "--json"], env, project, expect=0)
        report = proc.stdout.split("\nrecorded a receipt")[0]  # the JSON report, then the note
        check(json.loads(report)["ok"] is True, report)
        report_digest = hashlib.sha256(report.encode()).hexdigest()
        check("recorded a receipt for target h100 (NVIDIA H100 80GB HBM3, driver 580.95.05)" in proc.stdout,
              proc.stdout)
        lock = locked(project)
        check("verified" not in lock["targets"]["a100"], f"nothing under a100: {lock['targets']['a100']}")
        receipts = lock["targets"]["h100"]["verified"]
        check(len(receipts) == 1, str(receipts))
        receipt = receipts[0]
        check(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", receipt["date"]) is not None, str(receipt))
        check(receipt["gpu"] == "NVIDIA H100 80GB HBM3" and receipt["arch"] == "9.0", str(receipt))
        check(receipt["driver"] == "580.95.05" and receipt["toolkit"] == "13.0.2", str(receipt))
        check(receipt["report_sha256"] == report_digest, f"the digest of the JSON report: {receipt}")
        proc = cudaenv(["lock", "--check"], env, project, expect=0)
        check("is current" in proc.stdout, proc.stdout)
        # A lock written again for the same set keeps the receipt.
        cudaenv(["lock"], env, project, expect=0)
        check(len(locked(project)["targets"]["h100"]["verified"]) == 1, "the same set keeps its receipt")
        # Another pin, another locked set: the receipt no longer holds.
        (project / ".cudaenv").write_text(PROJECT.replace('cuda = "13.0"', 'cuda = "13.0.1"'))
        proc = cudaenv(["lock", "--check"], env, project)
        expect_error(proc, 1, "the lock is stale")
        check("targets.h100.verified: the receipt of " in proc.stdout, proc.stdout)
        cudaenv(["lock"], env, project, expect=0)
        lock = locked(project)
        check(lock["toolkit"]["version"] == "13.0.1" and "verified" not in lock["targets"]["h100"],
              f"the receipt is dropped: {lock['targets']['h100']}")


@case
def the_implicit_target_is_this_machine_and_a_machine_without_a_gpu_can_check_it(tmp):
    toolkit_release(tmp / "mirror", "13.0.2", "13.0.88")
    passing_toolkit(tmp / "cudaenv")
    project = project_in(tmp, 'cuda = "13.0"\n')
    with mirror_server(tmp / "mirror") as (url, _):
        env = machine_env(tmp, url)
        cudaenv(["lock"], env, project, expect=0)
        target = locked(project)["targets"]
        check(list(target) == ["this-machine"], str(target))
        check(target["this-machine"]["driver"] == "580.95.05" and target["this-machine"]["arch"] == ["9.0"],
              str(target))
        check(target["this-machine"]["CMAKE_CUDA_ARCHITECTURES"] == "90", str(target))
        # Its receipt goes under this-machine.
        proc = cudaenv(["verify", "13.0.2", "--record"], env, project, expect=0)
        check("recorded a receipt for target this-machine" in proc.stdout, proc.stdout)
        receipts = locked(project)["targets"]["this-machine"]["verified"]
        check(len(receipts) == 1 and receipts[0]["arch"] == "9.0", str(receipts))
        # CI: no GPU here, nothing declared; the check compares what it can and needs no GPU.
        no_gpu = machine_env(tmp, url, with_gpu=False)
        proc = cudaenv(["lock", "--check"], no_gpu, project, expect=0)
        check("is current" in proc.stdout, proc.stdout)
        toolkit_release(tmp / "mirror", "13.0.2", "13.0.88", padding=64)  # the mirror replaced nvcc
        proc = cudaenv(["lock", "--check"], no_gpu, project)
        expect_error(proc, 1, "the lock is stale")
        check("toolkit.components.cuda_nvcc.sha256: the lock has" in proc.stdout, proc.stdout)
        check("targets.this-machine.driver" not in proc.stdout and "targets.this-machine.arch" not in proc.stdout,
              f"the GPU-less machine is not compared with the locked one: {proc.stdout}")
        check("targets.this-machine.verified: the receipt of " in proc.stdout, proc.stdout)


finish()
