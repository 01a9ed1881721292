"""A Jetson (Tegra) board, recognised by L4T's /etc/nv_tegra_release: its driver comes with NVIDIA
JetPack, so `bootstrap` plans no driver step and `doctor` never offers a desktop driver package;
`resolve` says Jetson is out of scope (tests/cli/test_resolve.py). The fixtures are desktop
machines with the release file added: the point is what cudaenv does once it sees it."""

import json
import sys

from harness import DEBIAN_PATH, FAKE_DRIVER, SKIP, case, check, clean_env, finish, fixture_machine, run

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)

# As L4T R36 (JetPack 6) writes it.
RELEASE = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n"
DESKTOP_DRIVER = ["nvidia-driver-", "cuda-drivers-", "ubuntu-drivers"]


def machine(tmp, name, tegra):
    root = fixture_machine(name, tmp / "machines")
    if tegra:
        (root / "etc" / "nv_tegra_release").write_text(RELEASE)
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    return clean_env(home, CUDAENV_SYSROOT=root, CUDAENV_ROOT=tmp / "data", SHELL="/bin/bash",
                     PATH=DEBIAN_PATH)


@case
def bootstrap_plans_no_driver_on_a_jetson(tmp):
    desktop = run(["bootstrap", "--cuda", "12.4", "--dry-run"], machine(tmp / "d", "bootstrap-fresh-2204", False),
                  check_exit=0).stdout
    check(any(word in desktop for word in DESKTOP_DRIVER), f"the desktop machine gets its driver: {desktop}")
    out = run(["bootstrap", "--cuda", "12.4", "--dry-run"], machine(tmp / "j", "bootstrap-fresh-2204", True),
              check_exit=0).stdout
    check("Jetson (Tegra) board (# R36 (release), REVISION: 4.3" in out and "JetPack" in out, out)
    check(not any(word in out for word in DESKTOP_DRIVER), f"no desktop driver step on a Jetson: {out}")


@case
def doctor_sends_a_jetson_to_jetpack_not_a_driver_package(tmp):
    def driver_fix(tegra):
        env = machine(tmp / str(tegra), "doctor-toolkit-mismatch", tegra)
        env["PATH"] = f"/usr/local/cuda-12.4/bin:{DEBIAN_PATH}"  # a path of the machine
        proc = run(["doctor", "--json"], env)
        findings = {f["id"]: f for f in json.loads(proc.stdout)["findings"]}
        return findings["driver-toolkit"]
    desktop = driver_fix(False)
    check(any("nvidia-driver-" in line or "cuda-drivers-" in line or "ubuntu-drivers" in line
              for line in desktop["fix"]), f"a desktop machine is told which driver to install: {desktop}")
    jetson = driver_fix(True)
    check(jetson["status"] == desktop["status"] and jetson["fix"]
          and all(not any(word in line for word in DESKTOP_DRIVER) or line.startswith("#") for line in jetson["fix"])
          and any("JetPack" in line for line in jetson["fix"]), f"a Jetson is sent to JetPack: {jetson}")


finish()
