"""WSL2 on fixture machines (tests/fixtures/machines/wsl2-*): the Windows NVIDIA driver, mapped in
at /usr/lib/wsl/lib, is the driver `info`, `doctor`, `bootstrap` and `resolve` see; no Linux
kernel module, DKMS, nouveau or Secure Boot fix is offered there, bootstrap plans no driver, and a
Linux driver installed inside WSL by mistake is reported with the commands that remove it."""

import json
import shutil
import sys

from harness import DEBIAN_PATH, FAKE_DRIVER, SKIP, case, check, clean_env, finish, fixture_machine, run, run_json

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)

# WSL's default PATH ends with the Windows driver's directory (and the Windows PATH, left out).
WSL_PATH = "/usr/local/cuda/bin:" + DEBIAN_PATH + ":/usr/lib/wsl/lib"
HEALTHY = "wsl2-ubuntu-2404"
LINUX_DRIVER = "wsl2-linux-driver-2204"
# Fixes that belong to a Linux kernel driver: none may be offered inside WSL.
# (Purging a Linux driver's packages, nvidia-dkms-* among them, is the WSL fix, not one of these.)
KERNEL_FIXES = ["modprobe", "dkms install", "dkms autoinstall", "blacklist nouveau", "mokutil",
                "update-initramfs", "linux-headers", "ubuntu-drivers", "apt-get install -y nvidia-",
                "apt-get install -y cuda-drivers", "reboot"]


def machine(tmp, name, **variables):
    root = fixture_machine(name, tmp / "machines")
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    return root, clean_env(home, CUDAENV_SYSROOT=root, CUDAENV_ROOT=tmp / "data", PATH=WSL_PATH,
                           SHELL="/bin/bash", **variables)


def doctor_report(env, exit_code):
    proc = run(["doctor", "--json"], env, check_exit=exit_code)
    return {f["id"]: f for f in json.loads(proc.stdout)["findings"]}


def check_no_kernel_fixes(findings):
    for finding in findings.values():
        for line in finding["fix"]:
            for word in KERNEL_FIXES:
                check(word not in line, f"{finding['id']} offers {line!r} inside WSL2")


def set_windows_driver(root, version, cuda):
    """The copied machine's Windows driver, as its NVML and libcuda report it."""
    ini = root / "usr/lib/wsl/lib/fake-driver.ini"
    lines = [line for line in ini.read_text().splitlines()
             if not line.startswith(("driver_version=", "cuda_version="))]
    ini.write_text("\n".join([*lines, f"driver_version={version}", f"cuda_version={cuda}"]) + "\n")


def add_dpkg_package(root, name, version):
    """Records `name` as installed in the copied machine's dpkg status, as apt would."""
    status = root / "var/lib/dpkg/status"
    status.write_text(status.read_text().rstrip("\n") + "\n\n" +
                      f"Package: {name}\nStatus: install ok installed\nPriority: optional\n"
                      f"Section: multiverse/devel\nArchitecture: amd64\nVersion: {version}\n"
                      f"Description: CUDA Driver meta-package, branch-specific\n")


@case
def info_json_reads_the_windows_driver(tmp):
    root, env = machine(tmp, HEALTHY)
    report = run_json(["info"], env)
    check(report["wsl2"] == {
        "evidence": "/proc/sys/kernel/osrelease: 6.6.87.2-microsoft-standard-WSL2",
        "driver_directory": "/usr/lib/wsl/lib", "dxg_device": True,
        "linux_driver_libraries": []}, report["wsl2"])
    check(report["driver"] == {
        "version": "581.57", "cuda_version": "13.0", "source": "nvml",
        "library": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "open_kernel_module": False,
        "loaded": True}, report["driver"])
    check([(g["name"], g["sm"]) for g in report["gpus"]] == [("NVIDIA GeForce RTX 4070", "sm_89")],
          report["gpus"])
    check(report["modules"]["nvidia"] is False and report["modules"]["device_nodes"] == [],
          report["modules"])
    check(report["os"]["kernel"] == "6.6.87.2-microsoft-standard-WSL2", report["os"])
    check(report["notes"] == [], report["notes"])


@case
def info_text_names_wsl2_instead_of_kernel_modules(tmp):
    root, env = machine(tmp, HEALTHY)
    out = run(["info"], env, check_exit=0).stdout
    for line in ["Driver     581.57  supports CUDA <= 13.0",
                 "           the Windows driver, mapped into WSL2 at /usr/lib/wsl/lib/libnvidia-ml.so.1\n",
                 "WSL2       /proc/sys/kernel/osrelease: 6.6.87.2-microsoft-standard-WSL2\n",
                 "           /dev/dxg present (the GPU, paravirtualised by Windows)\n"]:
        check(line in out, f"info lacks {line!r}:\n{out}")
    check("Modules" not in out and "shadows" not in out, out)


@case
def info_prefers_windows_driver_over_a_linux_one(tmp):
    root, env = machine(tmp, LINUX_DRIVER)
    report = run_json(["info"], env)
    check(report["wsl2"]["linux_driver_libraries"] ==
          ["/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01"], report["wsl2"])
    # The Linux driver's libraries come first in the library directories, and its file names
    # carry 535.183.01; the Windows driver's answer wins all the same.
    check(report["driver"]["version"] == "566.36" and
          report["driver"]["library"] == "/usr/lib/wsl/lib/libnvidia-ml.so.1", report["driver"])
    check(not any("535" in note for note in report["notes"]), report["notes"])
    out = run(["info"], env, check_exit=0).stdout
    check("a Linux driver's /usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01 shadows the Windows "
          "driver's (remove the Linux driver)" in out, out)


@case
def wsl2_is_read_from_proc_version_too(tmp):
    root, env = machine(tmp, HEALTHY)
    (root / "proc/sys/kernel/osrelease").unlink()
    report = run_json(["info"], env)
    check(report["wsl2"]["evidence"].startswith(
        "/proc/version: Linux version 6.6.87.2-microsoft-standard-WSL2 (root@"), report["wsl2"])
    check(report["driver"]["version"] == "581.57", report["driver"])
    out = run(["info"], env, check_exit=0).stdout
    check("WSL2       /proc/version: Linux version 6.6.87.2-microsoft-standard-WSL2 (root@" in out, out)


@case
def an_ordinary_kernel_is_not_wsl2(tmp):
    root, env = machine(tmp, HEALTHY)
    (root / "proc/sys/kernel/osrelease").write_text("6.8.0-45-generic\n")
    (root / "proc/version").write_text("Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) "
                                       "(x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0)\n")
    report = run_json(["info"], env)
    check(report["wsl2"] is None, f"a generic kernel was taken for WSL2: {report['wsl2']}")
    check(run_json(["info"], machine(tmp / "other", "doctor-healthy-2404")[1])["wsl2"] is None,
          "doctor-healthy-2404 reports wsl2")
    # Off WSL2 the Linux rules apply: the module line is back, and an absent nvidia module counts.
    check("Modules" in run(["info"], env, check_exit=0).stdout, "info lost its Modules line")


@case
def wsl1_is_not_wsl2(tmp):
    root, env = machine(tmp, HEALTHY)
    (root / "proc/sys/kernel/osrelease").write_text("4.4.0-19041-Microsoft\n")
    (root / "proc/version").write_text("Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) "
                                       "(gcc version 5.4.0 (GCC) ) #1237-Microsoft Sat Sep 11 14:32:00 PST 2021\n")
    shutil.rmtree(root / "usr/lib/wsl")
    check(run_json(["info"], env)["wsl2"] is None, "WSL 1, which has no GPU, was taken for WSL2")


@case
def doctor_healthy_wsl2(tmp):
    root, env = machine(tmp, HEALTHY)
    findings = doctor_report(env, 0)
    statuses = {name: f["status"] for name, f in findings.items()}
    for name, status in [("kernel-module", "ok"), ("nouveau", "skip"), ("secure-boot", "skip"),
                         ("dkms", "skip"), ("driver-packages", "ok"), ("device-nodes", "ok"),
                         ("nvidia-smi", "ok"), ("driver-toolkit", "ok")]:
        check(statuses[name] == status, f"{name}: {statuses[name]}, expected {status}")
    check(findings["kernel-module"]["summary"] ==
          "WSL2: the Windows NVIDIA driver 581.57 serves the GPU; no Linux kernel module is needed",
          findings["kernel-module"])
    check("/dev/dxg: present" in findings["device-nodes"]["evidence"], findings["device-nodes"])
    check(findings["nvidia-smi"]["summary"] == "nvidia-smi answers: 581.57, NVIDIA GeForce RTX 4070",
          findings["nvidia-smi"])
    check(findings["driver-toolkit"]["summary"] ==
          "driver 581.57 fully supports CUDA 13.0.2 (needs >= 580.95.05)", findings["driver-toolkit"])
    check_no_kernel_fixes(findings)
    out = run(["doctor"], env, check_exit=0).stdout
    check("read: WSL2: /proc/sys/kernel/osrelease: 6.6.87.2-microsoft-standard-WSL2" in out, out)


@case
def doctor_warns_about_a_linux_driver_inside_wsl(tmp):
    root, env = machine(tmp, LINUX_DRIVER)
    findings = doctor_report(env, 1)  # the Linux nvidia-smi on PATH fails
    packages = findings["driver-packages"]
    check(packages["status"] == "warn", packages)
    check(packages["summary"].startswith(
        "WSL2: a Linux NVIDIA driver is installed inside WSL (libnvidia-compute-535, nvidia-dkms-535, "
        "nvidia-driver-535)"), packages["summary"])
    check(packages["fix"][:2] == [
        "sudo apt-get purge -y libnvidia-compute-535 nvidia-dkms-535 nvidia-driver-535",
        "sudo apt-get autoremove --purge -y   # the driver's own dependencies"], packages["fix"])
    check("a Linux driver's libcuda: /usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01"
          in packages["evidence"], packages["evidence"])
    smi = findings["nvidia-smi"]
    check(smi["status"] == "fail" and smi["summary"].startswith(
        "WSL2: /usr/bin/nvidia-smi is a Linux driver's nvidia-smi"), smi)
    check(smi["fix"][0] == "/usr/lib/wsl/lib/nvidia-smi   # the Windows driver's own", smi["fix"])
    # The Windows driver still serves the GPU; the kernel side is not the Linux kernel's business.
    check(findings["kernel-module"]["status"] == "ok", findings["kernel-module"])
    check(findings["dkms"]["status"] == "skip" and findings["nouveau"]["status"] == "skip", findings)
    check(findings["driver-toolkit"]["status"] == "ok", findings["driver-toolkit"])
    check_no_kernel_fixes(findings)


@case
def doctor_warns_about_cuda_drivers_inside_wsl(tmp):
    root, env = machine(tmp, HEALTHY)
    add_dpkg_package(root, "cuda-drivers-580", "580.95.05-0ubuntu1")
    findings = doctor_report(env, 0)  # a warning: the Windows driver still serves CUDA
    packages = findings["driver-packages"]
    check(packages["status"] == "warn" and packages["summary"].startswith(
        "WSL2: a Linux NVIDIA driver is installed inside WSL (cuda-drivers-580)"), packages)
    check(packages["fix"][0] == "sudo apt-get purge -y cuda-drivers-580", packages["fix"])
    check("/var/lib/dpkg/status: cuda-drivers-580 580.95.05-0ubuntu1" in packages["evidence"],
          packages["evidence"])
    out = run(["bootstrap", "--cuda", "13.0", "--dry-run"], env, check_exit=0).stdout
    check("# a Linux NVIDIA driver is installed inside WSL (cuda-drivers-580): remove it" in out, out)


@case
def doctor_sends_an_old_windows_driver_to_windows(tmp):
    root, env = machine(tmp, HEALTHY)
    set_windows_driver(root, "566.36", 12070)  # CUDA 13.0 needs the R580 branch
    findings = doctor_report(env, 1)
    toolkit = findings["driver-toolkit"]
    check(toolkit["status"] == "fail" and "566.36 is too old for CUDA 13.0.2" in toolkit["summary"],
          toolkit)
    check(toolkit["fix"][0] == "# on Windows, not inside WSL: install NVIDIA driver 580 or newer "
                               "for this GPU", toolkit["fix"])
    check_no_kernel_fixes(findings)


@case
def doctor_without_the_windows_driver(tmp):
    root, env = machine(tmp, HEALTHY)
    for name in ["libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1", "nvidia-smi"]:
        (root / "usr/lib/wsl/lib" / name).unlink()
    (root / "dev/dxg").unlink()
    findings = doctor_report(env, 1)
    module = findings["kernel-module"]
    check(module["status"] == "fail" and module["summary"] ==
          "WSL2: the Windows NVIDIA driver does not answer through /usr/lib/wsl/lib", module)
    check(module["fix"][0].startswith("# on Windows, not inside WSL"), module["fix"])
    check(findings["device-nodes"]["status"] == "fail", findings["device-nodes"])
    check(findings["nvidia-smi"]["status"] == "warn", findings["nvidia-smi"])
    check_no_kernel_fixes(findings)


@case
def bootstrap_plans_toolkits_only(tmp):
    root, env = machine(tmp, HEALTHY)
    out = run(["bootstrap", "--cuda", "12.8", "--dry-run"], env, check_exit=0).stdout
    for line in ["# WSL2 (/proc/sys/kernel/osrelease: 6.6.87.2-microsoft-standard-WSL2): the driver "
                 "is the Windows one; a Linux driver inside WSL would break it, so no driver steps\n",
                 "# the Windows driver 581.57 fully supports CUDA 12.8",
                 "# Reboot needed: no\n", "cudaenv install 12.8\n"]:
        check(line in out, f"plan lacks {line!r}:\n{out}")
    for word in ["apt-get", "ubuntu-drivers", "nvidia-driver", "linux-headers", "dkms",
                 "update-initramfs", "blacklist", "nvidia-smi"]:
        check(word not in out, f"the WSL2 plan has {word!r}:\n{out}")


@case
def bootstrap_ignores_driver_flag_and_names_the_linux_driver(tmp):
    root, env = machine(tmp, LINUX_DRIVER)
    out = run(["bootstrap", "--cuda", "12.4", "--driver", "550", "--dry-run"], env,
              check_exit=0).stdout
    for line in ["# --driver 550 is not used: inside WSL2 the driver is installed on Windows\n",
                 "# a Linux NVIDIA driver is installed inside WSL (libnvidia-compute-535, "
                 "nvidia-dkms-535, nvidia-driver-535): remove it (`cudaenv doctor` gives the commands)\n",
                 "cudaenv install 12.4\n"]:
        check(line in out, f"plan lacks {line!r}:\n{out}")
    check("nvidia:550" not in out and "nvidia-driver-550" not in out, out)


@case
def bootstrap_sends_an_old_windows_driver_to_windows(tmp):
    root, env = machine(tmp, HEALTHY)
    set_windows_driver(root, "566.36", 12070)
    out = run(["bootstrap", "--cuda", "13.0", "--dry-run"], env, check_exit=0).stdout
    check("# the Windows driver 566.36 does not fully support CUDA 13.0" in out and
          "install NVIDIA driver 580 or newer on Windows" in out, out)
    check("apt-get" not in out and "ubuntu-drivers" not in out, out)


@case
def resolve_uses_the_windows_driver(tmp):
    root, env = machine(tmp, LINUX_DRIVER)
    report = run_json(["resolve", "--cuda", "12"], env)
    target = report["target"]
    check(target["driver"] == "566.36" and target["driver_source"] == "detected", target)
    check(target["gpus"] == ["8.6"], target)
    check(report["driver"]["detected"] == "566.36", report["driver"])
    check(any("WSL2" in note and "on Windows" in note for note in report["notes"]), report["notes"])
    # Nothing fits this driver: the fix is a Windows driver, never a Linux package.
    proc = run(["resolve", "--cuda", "13", "--json"], env, check_exit=4)
    suggestions = json.loads(proc.stdout)["suggestions"]
    check(any(s.startswith("upgrade the NVIDIA driver on Windows") for s in suggestions)
          and not any("Ubuntu: nvidia-driver" in s for s in suggestions), f"Windows driver fix: {suggestions}")


finish()
