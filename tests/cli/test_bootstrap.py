"""`cudaenv bootstrap` run for real against a fixture root (a fresh Ubuntu 22.04 with nouveau):
recording stand-ins for apt-get, update-initramfs, ubuntu-drivers, cudaenv (the toolkit install)
and nvidia-smi sit first on PATH and append their argv to a log; the commands and their order are
asserted, then a failure in the middle, the resumed run, the reboot and a run with nothing left."""

import json
import os
import sys

from framework_wheels import framework_index
from harness import BINARY, DEBIAN_PATH, SKIP, case, check, clean_env, finish, fixture_machine, global_config, run
from synthetic_wheels import cuda13_release

if os.geteuid() != 0:
    # As a user every privileged command would go through sudo; these tests assert the root form.
    print("skip: the recorded command lines are those of a root run")
    sys.exit(SKIP)

STAND_INS = ["apt-get", "update-initramfs", "ubuntu-drivers", "cudaenv", "nvidia-smi"]


def make_stand_ins(directory, log, failing=None):
    """Scripts that log "name arg..." and succeed; `failing` exits 100 as apt does on errors."""
    directory.mkdir(exist_ok=True)
    for name in STAND_INS:
        code = 100 if name == failing else 0
        script = directory / name
        script.write_text(
            "#!/bin/sh\n"
            f"echo \"{name} $*\" >> '{log}'\n"
            + (f"echo '{name}: simulated failure' >&2\n" if code else "")
            + f"exit {code}\n")
        script.chmod(0o755)


def setup(tmp):
    root = fixture_machine("bootstrap-fresh-2204", tmp / "machines")
    home = tmp / "home"
    home.mkdir()
    log = tmp / "commands.log"
    bin_dir = tmp / "stand-ins"
    env = clean_env(home, CUDAENV_SYSROOT=root, CUDAENV_ROOT=tmp / "data", SHELL="/bin/bash",
                    PATH=f"{bin_dir}:{DEBIAN_PATH}")
    return root, home, log, bin_dir, env


def logged(log):
    return log.read_text().splitlines() if log.exists() else []


EXPECTED = [
    "apt-get update",
    "apt-get install -y dkms linux-headers-6.5.0-35-generic",
    "update-initramfs -u",
    "ubuntu-drivers install nvidia:550",
    "cudaenv install 12.4",
]


@case
def dry_run_prints_the_plan(tmp):
    root, home, log, bin_dir, env = setup(tmp)
    make_stand_ins(bin_dir, log)
    proc = run(["bootstrap", "--cuda", "12.4", "--dry-run"], env, check_exit=0)
    check(proc.stdout.startswith("#!/bin/sh\n# cudaenv bootstrap plan for Ubuntu 22.04"), proc.stdout)
    for line in ["DEBIAN_FRONTEND=noninteractive apt-get update",
                 "ubuntu-drivers install nvidia:550", "update-initramfs -u",
                 "cudaenv install 12.4", "# Reboot needed: yes"]:
        check(line in proc.stdout, f"dry run lacks {line!r}:\n{proc.stdout}")
    check(logged(log) == [], f"a dry run ran commands: {logged(log)}")


@case
def failure_resume_reboot_and_nothing_left(tmp):
    root, home, log, bin_dir, env = setup(tmp)
    # 1. ubuntu-drivers fails: the run stops there, with the fix, exit 1.
    make_stand_ins(bin_dir, log, failing="ubuntu-drivers")
    proc = run(["bootstrap", "--cuda", "12.4", "--yes"], env, check_exit=1)
    check(logged(log) == EXPECTED[:4], f"first run: {logged(log)}")
    check("step driver failed: ubuntu-drivers install nvidia:550 exited 100" in proc.stderr,
          proc.stderr)
    check("hint:" in proc.stderr and "run `cudaenv bootstrap` again" in proc.stderr, proc.stderr)
    blacklist = root / "etc/modprobe.d/blacklist-nouveau.conf"
    check(blacklist.read_text() == "blacklist nouveau\noptions nouveau modeset=0\n",
          "blacklist file not written under the fixture root")
    state = (tmp / "data/bootstrap/state.json").read_text()
    check('"nouveau-blacklist"' in state and '"driver"' not in state, state)

    # 2. Fixed: the rerun starts at the failed step, then stops for the reboot the driver needs.
    log.unlink()
    make_stand_ins(bin_dir, log)
    proc = run(["bootstrap", "--cuda", "12.4", "--yes"], env, check_exit=0)
    check(logged(log) == EXPECTED[3:], f"resumed run: {logged(log)}")
    check("Reboot now" in proc.stdout, proc.stdout)
    rc = (home / ".bashrc").read_text()
    check(rc == 'eval "$(cudaenv init bash)"\n', f".bashrc: {rc!r}")

    # 3. Without a reboot nothing more happens.
    log.unlink()
    run(["bootstrap", "--cuda", "12.4", "--yes"], env, check_exit=0)
    check(logged(log) == [], f"run before the reboot: {logged(log)}")

    # 4. After the reboot (a new boot id) the last step checks the driver.
    (root / "proc/sys/kernel/random/boot_id").write_text("1d2c3b4a-0000-4000-8000-000000000001\n")
    proc = run(["bootstrap", "--cuda", "12.4", "--yes"], env, check_exit=0)
    check(logged(log) == ["nvidia-smi "], f"run after the reboot: {logged(log)}")
    check("Bootstrap finished" in proc.stdout, proc.stdout)

    # 5. Everything is done: a further run starts nothing and leaves the rc file alone.
    log.unlink()
    run(["bootstrap", "--cuda", "12.4", "--yes"], env, check_exit=0)
    check(logged(log) == [], f"final run: {logged(log)}")
    check((home / ".bashrc").read_text().count("cudaenv init") == 1, "hook line added twice")


@case
def declined_privileged_step_stops(tmp):
    root, home, log, bin_dir, env = setup(tmp)
    make_stand_ins(bin_dir, log)
    import subprocess
    proc = subprocess.run([BINARY, "bootstrap", "--cuda", "12.4"], env=env, input="n\n",
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}")
    check("with root privileges? [y/N]" in proc.stderr, proc.stderr)
    check("step apt-update not confirmed" in proc.stderr, proc.stderr)
    check(logged(log) == [], f"declined run ran: {logged(log)}")


@case
def toolkit_steps_install_from_the_index_chosen(tmp):
    """--source pypi and --index-url, or the config's source and index_url: each toolkit step
    installs from that index, and the plan says which index and where it was set."""
    root, home, log, bin_dir, env = setup(tmp)
    make_stand_ins(bin_dir, log)
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    with framework_index(wheels) as (base, _):
        index = f"{base}/simple"
        proc = run(["bootstrap", "--cuda", "13.0.2", "--source", "pypi", "--index-url", index,
                    "--dry-run"], env, check_exit=0)
        check(f"\ncudaenv install 13.0.2 --source pypi --index-url {index}\n" in proc.stdout,
              f"the step installs from the index: {proc.stdout}")
        check(f"# toolkits from the index {index} (set by --index-url)\n" in proc.stdout,
              f"the plan names the index and where it was set: {proc.stdout}")
        # A real run, the toolkit step by this build (logged first), the index from the config.
        (bin_dir / "cudaenv").write_text(f"#!/bin/sh\necho \"cudaenv $*\" >> '{log}'\n"
                                         f"exec '{BINARY}' \"$@\"\n")
        config = global_config(env, f'source = "pypi"\nindex_url = "{index}"\n')
        proc = run(["bootstrap", "--cuda", "13.0.2", "--yes"], env)
    check(proc.returncode == 0, f"the bootstrap ran: {proc.stdout!r} {proc.stderr!r}")
    check(f"toolkits from the index {index} (set by index_url in {config})" in proc.stderr,
          f"the summary names the config's index: {proc.stderr!r}")
    check(f"cudaenv install 13.0.2 --source pypi --index-url {index}" in logged(log),
          f"the step: {logged(log)}")
    receipt = json.loads((tmp / "data" / "toolkits" / "13.0.2" / "cudaenv-receipt.json").read_text())
    check(receipt["source"] == "pypi" and receipt["mirror"] == index, f"installed from the index: {receipt}")


@case
def unsupported_os_is_refused(tmp):
    root = fixture_machine("rocky-hpcsdk-wrapper", tmp / "machines")
    home = tmp / "home"
    home.mkdir()
    env = clean_env(home, CUDAENV_SYSROOT=root, CUDAENV_ROOT=tmp / "data")
    proc = run(["bootstrap", "--dry-run"], env, check_exit=1)
    check("cudaenv: error: unsupported OS: Rocky Linux 9" in proc.stderr, proc.stderr)
    check("supported: Ubuntu 20.04, 22.04, 24.04 and Debian 12" in proc.stderr, proc.stderr)


finish()
