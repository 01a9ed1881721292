"""`cudaenv bootstrap --dry-run` prints a shell script built from values of the machine: the OS
name from os-release, the kernel's release (the headers package is named after it), $HOME (the rc
file). A value holding a newline inside a `# comment` line would start a command of its own, one
holding ESC would reach the terminal the script is shown on. On a fixture machine whose values
hold newlines, `$(...)` and escape sequences, the printed script passes `bash -n`, holds no raw
control byte, and run for real with stand-ins for every program it calls, runs no injected
command."""

import os
import re
import subprocess

from harness import DEBIAN_PATH, case, check, clean_env, finish, fixture_machine, run

STAND_INS = ["apt-get", "sudo", "update-initramfs", "ubuntu-drivers", "cudaenv", "nvidia-smi", "tee", "mkdir",
             "wget", "dpkg", "curl", "gpg", "nvidia-ctk", "systemctl", "reboot"]
INJECTED = "touch"  # the stand-in for the command a value tries to start


def hostile_machine(tmp):
    root = fixture_machine("bootstrap-fresh-2204", tmp / "machines")
    release = (root / "etc" / "os-release").read_text()
    release = release.replace('PRETTY_NAME="Ubuntu 22.04.4 LTS"',
                              'PRETTY_NAME="Ubuntu 22.04.4 LTS\x1b]0;owned\x07\r$(touch os-release-ran)"')
    (root / "etc" / "os-release").write_text(release)
    (root / "proc" / "sys" / "kernel" / "osrelease").write_text(
        "6.5.0-35-generic\n$(touch kernel-ran)\ntouch kernel-ran\n")
    home = tmp / "home\n$(touch home-ran)\ntouch home-ran"
    home.mkdir()
    return root, home


def stand_ins(directory, log, marker):
    directory.mkdir()
    for name in STAND_INS:
        (directory / name).write_text(f"#!/bin/sh\necho \"{name} $*\" >> '{log}'\ncat > /dev/null\n")
    (directory / INJECTED).write_text(f"#!/bin/sh\necho \"$*\" >> '{marker}'\n")
    for script in directory.iterdir():
        script.chmod(0o755)


def raw_controls(text):
    return sorted({f"0x{ord(c):02x}" for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})


@case
def the_dry_run_script_carries_no_value_as_code(tmp):
    root, home = hostile_machine(tmp)
    env = clean_env(home, CUDAENV_SYSROOT=root, CUDAENV_ROOT=tmp / "data", SHELL="/bin/bash", PATH=DEBIAN_PATH)
    proc = run(["bootstrap", "--cuda", "12.4", "--dry-run"], env)
    check(proc.returncode == 0, f"the dry run prints a plan: {proc.returncode} {proc.stderr!r}")
    script = proc.stdout
    check(script.startswith("#!/bin/sh\n"), script[:200])
    check(raw_controls(script) == [], f"raw control bytes in the script: {raw_controls(script)}")
    check("\\x1b]0;owned\\x07" in script, f"the OS name is shown escaped: {script[:300]!r}")
    syntax = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=60)
    check(syntax.returncode == 0, f"bash -n accepts the script: {syntax.stderr!r}")
    live = [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for line in live:
        check(not re.search(r"(^|[;&|]\s*)touch\b", line) and not line.startswith("$("),
              f"no command of a value's own: {line!r}")
    check("kernel-ran" not in "\n".join(live) or "exit 1" in live,
          f"the command naming the hostile package is refused, not written: {live}")
    # Run it: every program it names is a stand-in; `touch` records that a value ran.
    work = tmp / "run"
    work.mkdir()
    log, marker = work / "commands.log", work / "injected"
    stand_ins(work / "bin", log, marker)
    subprocess.run(["/bin/sh", "-c", script], cwd=work, env={"PATH": str(work / "bin"), "HOME": str(home)},
                   capture_output=True, text=True, timeout=60)
    check(not marker.exists(), f"an injected command ran: {marker.read_text() if marker.exists() else ''!r}")
    commands = log.read_text() if log.exists() else ""
    check("apt-get update" in commands, f"the script's own commands ran up to the refusal: {commands!r}")


finish()
