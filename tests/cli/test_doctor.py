"""`cudaenv doctor` on fixture machines: the real binary's text report (numbered findings with
evidence and fixes), its JSON document, and its exit code (1 when any check fails)."""

import json
import sys

from harness import FAKE_DRIVER, SKIP, case, check, clean_env, finish, fixture_machine, run

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)

PATH = "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def machine_env(tmp, name, **variables):
    root = fixture_machine(name, tmp / "machines")
    home = tmp / "home"
    home.mkdir()
    return clean_env(home, CUDAENV_SYSROOT=root, PATH=PATH, **variables)


@case
def healthy_machine_text(tmp):
    proc = run(["doctor"], machine_env(tmp, "doctor-healthy-2404"), check_exit=0)
    out = proc.stdout
    check(out.startswith("Active toolkit: CUDA 13.0.2 at /usr/local/cuda-13.0 (nvcc on PATH)\n"), out)
    check(" 1. ok    NVIDIA kernel module loaded\n" in out, out)
    check("15. ok    PyTorch built for this driver and these GPUs\n" in out, out)
    check("read: /proc/modules: nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm loaded" in out, out)
    check(out.endswith("20 checks: 15 ok, 0 warn, 0 fail, 5 skipped\n"), out)


@case
def nouveau_machine_json(tmp):
    proc = run(["doctor", "--json"], machine_env(tmp, "doctor-nouveau-2204"), check_exit=1)
    report = json.loads(proc.stdout)
    check(report["schema_version"] == 1 and report["ok"] is False, report)
    check(report["summary"] == {"ok": 7, "warn": 0, "fail": 5, "skip": 8}, report["summary"])
    check(report["active_toolkit"] == {"version": "11.8.0", "path": "/usr/local/cuda-11.8",
                                       "selected_by": "nvcc on PATH"}, report["active_toolkit"])
    statuses = {f["id"]: f["status"] for f in report["findings"]}
    check(statuses["nouveau"] == "fail" and statuses["kernel-module"] == "fail", statuses)
    nouveau = next(f for f in report["findings"] if f["id"] == "nouveau")
    check(nouveau["number"] == 2 and nouveau["fix"][1] == "sudo update-initramfs -u", nouveau)
    check(list(nouveau) == ["number", "id", "title", "status", "summary", "evidence", "fix"],
          list(nouveau))


@case
def nouveau_machine_text_has_fixes(tmp):
    proc = run(["doctor"], machine_env(tmp, "doctor-nouveau-2204"), check_exit=1)
    check(" 2. fail  nouveau kept off the GPU\n" in proc.stdout, proc.stdout)
    check("fix:  printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
          "/etc/modprobe.d/blacklist-nouveau.conf\n" in proc.stdout, proc.stdout)


finish()
