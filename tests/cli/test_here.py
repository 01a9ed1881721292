"""What applies here is decided once (src/here/) and every command reads that answer: a pin a
system toolkit satisfies selects it everywhere; scan and why follow the project's toolkit with
or without the hook; CUDAENV_DEBUG=1 and `current --explain` say which files, stores and rules
decided."""

import json
import os
import subprocess

from harness import BINARY, DEBIAN_PATH, case, check, clean_env, finish, install_synthetic_toolkits, run_in


def system_toolkit(machine, directory, release, nvcc):
    """A toolkit installed outside cudaenv, as NVIDIA's runfile leaves one: version.json names it."""
    prefix = machine / "usr" / "local" / directory
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib64").mkdir()
    (prefix / "include").mkdir()
    nvcc_path = prefix / "bin" / "nvcc"
    nvcc_path.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {nvcc[:4]}, V{nvcc}'\n")
    nvcc_path.chmod(0o755)
    (prefix / "lib64" / f"libcudart.so.{release.split('.')[0]}").write_text("elf")
    (prefix / "version.json").write_text(json.dumps(
        {"cuda": {"name": "CUDA SDK", "version": release}, "cuda_nvcc": {"name": "CUDA NVCC", "version": nvcc}}))
    return prefix


def project(tmp, text):
    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True, exist_ok=True)
    (repo / ".cudaenv").write_text(text)
    return repo / "src"


@case
def a_pin_a_system_toolkit_satisfies_selects_it_in_every_command(tmp):
    machine = tmp / "machine"
    prefix = system_toolkit(machine, "cuda-13.0", "13.0.2", "13.0.88")
    system_toolkit(machine, "cuda-12.8", "12.8.1", "12.8.93")
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=machine, PATH=DEBIAN_PATH)
    for pin in ('cuda = "13.0.2"\n', 'cuda = "13.0"\n', 'cuda = "13.0.88"\n'):
        here = project(tmp, pin)
        current = run_in(["current", "--json"], env, here, expect=0)
        if current.returncode != 0:
            continue
        data = json.loads(current.stdout)
        check(data["prefix"] == str(prefix) and data["version"] == "13.0.2",
              f"current names the system's 13.0.2 for {pin!r}: {data}")
        shell = run_in(["env", "--shell", "json"], env, here, expect=0)
        check(json.loads(shell.stdout).get("CUDA_HOME") == str(prefix), f"env sets CUDA_HOME for {pin!r}: {shell.stdout}")
    here = project(tmp, 'cuda = "13.0.2"\n')
    listed = json.loads(run_in(["list", "--json"], env, here, expect=0).stdout)
    check(listed["active"] and listed["active"]["path"] == "/usr/local/cuda-13.0", f"list: {listed['active']}")
    doctor = json.loads(run_in(["doctor", "--json"], env, here).stdout)
    check((doctor["active_toolkit"] or {}).get("path") == "/usr/local/cuda-13.0",
          f"doctor: {doctor['active_toolkit']}")
    verify = run_in(["verify", "--json"], env, here)
    report = json.loads(verify.stdout) if verify.stdout.strip().startswith("{") else {}
    check((report.get("toolkit") or {}).get("path") == "/usr/local/cuda-13.0",
          f"verify proves the same toolkit: {verify.stdout[:400]} {verify.stderr}")
    # A pin no toolkit satisfies is one error everywhere, naming the pin and its file.
    here = project(tmp, 'cuda = "12.4"\n')
    missing = run_in(["current"], env, here, expect=3)
    check("CUDA 12.4" in missing.stderr and f"{tmp}/repo/.cudaenv" in missing.stderr, f"current: {missing.stderr}")
    listed = run_in(["list"], env, here, expect=0).stdout
    check("CUDA 12.4 is selected here" in listed and "* " not in listed, f"list says so, marks nothing:\n{listed}")


@case
def scan_and_why_follow_the_project_without_the_hook(tmp):
    env = install_synthetic_toolkits(tmp, PATH=DEBIAN_PATH)
    here = project(tmp, 'cuda = "12.1"\n')
    scanned = run_in(["scan", "--json"], env, here)
    check(scanned.returncode in (0, 1), f"scan ran: {scanned.stderr}")
    data = json.loads(scanned.stdout)
    check(data["toolkit"] == f"{tmp}/root/toolkits/12.1.1", f"scan reads the project's toolkit: {data['toolkit']}")
    check(any(r.startswith(f"{tmp}/root/toolkits/12.1.1") for r in data["roots"]),
          f"its libraries are scanned: {data['roots']}")
    # why simulates a process started from this shell; it judges it against the project's pins
    # and says the shell lacks them (which copy loads, with real libraries: test_here_consistency).
    why = run_in(["why", "libcudart.so.12", "--json"], env, here)
    answer = json.loads(why.stdout)
    check(any("CUDA_HOME is not what applies here" in n for n in answer.get("notes", [])),
          f"why says the shell lacks the project's environment: {answer.get('notes')}")
    hooked = dict(env, **json.loads(run_in(["env", "--shell", "json"], env, here, expect=0).stdout))
    hooked = {k: v for k, v in hooked.items() if v is not None}
    answer = json.loads(run_in(["why", "libcudart.so.12", "--json"], hooked, here).stdout)
    check(not any("not what applies here" in n for n in answer.get("notes", [])),
          f"no such note in the activated shell: {answer.get('notes')}")

@case
def the_decision_can_be_explained(tmp):
    env = install_synthetic_toolkits(tmp, PATH=DEBIAN_PATH)
    here = project(tmp, 'cuda = "12.4"\n')
    explained = run_in(["current", "--explain"], env, here, expect=0)
    out = explained.stdout
    check("why:" in out and f"{tmp}/repo/.cudaenv" in out, f"names the file that selected:\n{out}")
    check(f"stores consulted: {tmp}/root" in out, f"names the stores consulted:\n{out}")
    check(f"store match for 12.4: {tmp}/root/toolkits/12.4.1" in out, f"names the rule that matched:\n{out}")
    check("host compiler:" in out, f"names the host compiler's rule:\n{out}")
    check(out.rstrip().endswith(f"12.4.1 (from {tmp}/repo/.cudaenv)"), f"then the answer:\n{out}")
    traced = run_in(["env", "--shell", "bash"], dict(env, CUDAENV_DEBUG="1"), here, expect=0)
    debug = [line for line in traced.stderr.splitlines() if line.startswith("cudaenv: debug: ")]
    check(any("store match for 12.4" in line for line in debug), f"CUDAENV_DEBUG=1 traces on stderr: {traced.stderr}")
    check("debug" not in traced.stdout, "the trace never reaches the shell code on stdout")
    quiet = run_in(["env", "--shell", "bash"], env, here, expect=0)
    check("debug" not in quiet.stderr, f"no trace without CUDAENV_DEBUG: {quiet.stderr}")
    odd = tmp / "re\x1b[31mpo"
    odd.mkdir()
    (odd / ".cudaenv").write_text('cuda = "12.4"\n')
    shown = run_in(["current", "--explain"], env, odd, expect=0)
    check("\x1b" not in shown.stdout and "\\x1b" in shown.stdout, f"the trace is printable: {shown.stdout!r}")


def shell_finding(env, cwd):
    report = json.loads(run_in(["doctor", "--json"], env, cwd).stdout)
    return next(f for f in report["findings"] if f["id"] == "shell-hook")


def hook_env(env, cwd):
    """The environment a bash with the hook has after `cd cwd`."""
    script = f'cd "$1" && eval "$("{BINARY}" hook-env --shell bash)" && env -0'
    proc = subprocess.run(["bash", "--norc", "-c", script, "bash", str(cwd)], env=env, capture_output=True,
                          text=True, timeout=120)
    check(proc.returncode == 0, f"hook-env in {cwd}: {proc.stderr}")
    return dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item)


@case
def doctor_names_a_missing_or_stale_hook_and_the_line_that_mends_it(tmp):
    env = install_synthetic_toolkits(tmp, PATH=DEBIAN_PATH, SHELL="/usr/bin/zsh")
    here = project(tmp, 'cuda = "12.4"\n')
    missing = shell_finding(env, here)
    check(missing["status"] == "warn" and "the shell hook is not installed" in missing["summary"],
          f"no hook: {missing}")
    check("echo 'eval \"$(cudaenv init zsh)\"' >> ~/.zshrc" in missing["fix"], f"the line to add: {missing['fix']}")
    hooked = hook_env(env, here)
    check(shell_finding(hooked, here)["status"] == "ok", f"with the hook: {shell_finding(hooked, here)}")
    other = tmp / "other"
    other.mkdir()
    (other / ".cudaenv").write_text('cuda = "12.1"\n')
    stale = shell_finding(hook_env(env, other), here)
    check(stale["status"] == "warn" and "the shell hook is stale: this shell carries CUDA 12.1.1" in stale["summary"],
          f"a shell still carrying the other project's toolkit: {stale}")
    overridden = dict(hooked, PATH=f"{tmp}/root/toolkits/12.1.1/bin:" + hooked["PATH"])
    later = shell_finding(overridden, here)
    check(later["status"] == "warn" and "overrides the hook" in later["summary"], f"a later PATH line: {later}")
    init = subprocess.run([BINARY, "init", "zsh"], env=env, capture_output=True, text=True, timeout=60)
    check("to install the hook" not in init.stderr, "inside eval \"$(...)\" init says nothing on stderr")


@case
def uninstalling_what_is_active_here_asks_first(tmp):
    env = install_synthetic_toolkits(tmp, PATH=DEBIAN_PATH)
    here = project(tmp, 'cuda = "12.4"\n')
    refused = run_in(["uninstall", "12.4.1"], env, here)
    check(refused.returncode == 1 and "CUDA 12.4.1 is active here (from " in refused.stderr
          and "--yes" in refused.stderr, f"refused without a terminal: {refused.returncode} {refused.stderr}")
    check((tmp / "root" / "toolkits" / "12.4.1").is_dir(), "nothing was removed")
    answered = subprocess.run([BINARY, "uninstall", "12.4.1"], env=env, cwd=here, input="n\n",
                              capture_output=True, text=True, timeout=60)
    check((tmp / "root" / "toolkits" / "12.4.1").is_dir(), f"stdin not a terminal, still kept: {answered.stderr}")
    run_in(["uninstall", "12.1.1"], env, here, expect=0)  # not active here: no question
    removed = run_in(["uninstall", "12.4.1", "--yes"], env, here, expect=0)
    check(not (tmp / "root" / "toolkits" / "12.4.1").exists(), f"--yes removes it: {removed.stderr}")


finish()
