"""`cudaenv self-update`: replaces an installed release bundle with the newer one the mirror
serves (sha256-checked, unpacked beside the installed tree, its programs run and found to print
the announced version, and switched to in one rename, so a kill at any instant leaves the
installation wholly old or wholly new, and the tree it replaced stays for programs still
running); refuses a bundle whose checksum does not match, or whose programs do not run or print
another version (exit 6, nothing replaced), says when it is up to date, and refuses to touch a
cudaenv that is not a bundle installation."""

import os
import shutil
import subprocess
from pathlib import Path

from bundle_helpers import (build_program, built_version, bundle_tarball, digests, installed_bundle, printing,
                            serve_bundle)
from harness import case, check, clean_env, expect_error, finish, mirror_server

MARKER = b"\0cudaenv-9.0.0-marker"
OLD_MARKER = b"\0cudaenv-8.0.0-marker"
PATIENCE = 120
PROGRAMS = ("bin/cudaenv", "libexec/cudaenv/cudaenv-full", "libexec/cudaenv/cudaenv-shim")


def run_installed(prefix, args, env):
    return subprocess.run([str(prefix / "bin" / "cudaenv"), *args], env=env, capture_output=True,
                          text=True, timeout=60)


@case
def a_newer_bundle_replaces_the_installed_one(tmp):
    prefix = installed_bundle(tmp / "prefix")
    serve_bundle(tmp / "mirror", bundle_tarball(tmp, "9.0.0", MARKER))
    env = clean_env(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_installed(prefix, ["self-update", "--mirror", url], env)
    check(proc.returncode == 0, f"self-update succeeds: {proc.stderr!r}")
    check("to 9.0.0" in proc.stdout, f"it says what it installed: {proc.stdout!r}")
    for program in PROGRAMS:
        check((prefix / program).read_bytes().endswith(MARKER), f"{program} is the new one")
    check((prefix / "share/cudaenv/VERSION").read_text() == "9.0.0\n", "new files arrive too")
    front = prefix / "bin/cudaenv"
    check(front.is_symlink() and os.readlink(front) == "../lib/cudaenv-bundle/current/bin/cudaenv",
          "bin/cudaenv now leads into the bundle's tree: the one link a later update switches")
    check(not list((prefix / "lib/cudaenv-bundle").glob(".incoming-*")), "no staging directory is left")
    again = run_installed(prefix, ["--version"], env)
    check(again.returncode == 0 and again.stdout.startswith("cudaenv "), "the new cudaenv runs")


@case
def a_checksum_mismatch_replaces_nothing(tmp):
    prefix = installed_bundle(tmp / "prefix")
    before = digests(prefix)
    serve_bundle(tmp / "mirror", bundle_tarball(tmp, "9.0.0", MARKER), sha256="0" * 64)
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_installed(prefix, ["self-update", "--mirror", url], clean_env(tmp))
    expect_error(proc, 6, "sha256 mismatch", "cudaenv-9.0.0-linux-x86_64.tar.gz")
    check(digests(prefix) == before, "every installed file is unchanged")
    check(not list(prefix.rglob(".incoming-*")), "no staging directory is left")


def refused_update(tmp, tarball, *needles):
    """self-update offered `tarball`: exit 6 naming it and `needles`, nothing replaced."""
    prefix = installed_bundle(tmp / "prefix")
    before = digests(prefix)
    links = sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.is_symlink())
    serve_bundle(tmp / "mirror", tarball)
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_installed(prefix, ["self-update", "--mirror", url], clean_env(tmp))
    expect_error(proc, 6, "cudaenv-9.0.0-linux-x86_64.tar.gz", *needles)
    check("nothing was replaced" in proc.stderr, proc.stderr)
    check(digests(prefix) == before, "every installed file is byte for byte the old one")
    check(sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.is_symlink()) == links,
          "no link was placed")
    check(not list(prefix.rglob(".incoming-*")), "no staging directory is left")
    again = run_installed(prefix, ["--version"], clean_env(tmp))
    check(again.returncode == 0 and again.stdout.strip() == f"cudaenv {built_version()}", "the old cudaenv runs")


@case
def a_bundle_whose_programs_print_another_version_replaces_nothing(tmp):
    refused_update(tmp, bundle_tarball(tmp, "9.0.0", MARKER, prints="7.0.0"),
                   'bin/cudaenv --version printed "cudaenv 7.0.0", not "cudaenv 9.0.0"')


@case
def a_bundle_whose_shim_is_another_version_replaces_nothing(tmp):
    shim = "libexec/cudaenv/cudaenv-shim"
    other = printing(build_program("cudaenv-shim").read_bytes(), "7.0.0")
    refused_update(tmp, bundle_tarball(tmp, "9.0.0", MARKER, replaced={shim: other}),
                   f'{shim} --version printed "cudaenv-shim 7.0.0"')


@case
def a_bundle_whose_programs_do_not_run_replaces_nothing(tmp):
    full = "libexec/cudaenv/cudaenv-full"
    failing = b"#!/bin/sh\necho 'cudaenv 9.0.0'\nexit 3\n"
    refused_update(tmp, bundle_tarball(tmp, "9.0.0", MARKER, replaced={full: failing}),
                   "bin/cudaenv --version exited 3")
    refused_update(tmp / "garbage", bundle_tarball(tmp, "9.0.0", MARKER, replaced={full: b"\x7fELF garbage"}),
                   "bin/cudaenv --version")


@case
def an_older_or_equal_bundle_is_up_to_date_and_a_bad_announcement_is_refused(tmp):
    prefix = installed_bundle(tmp / "prefix")
    before = digests(prefix)
    serve_bundle(tmp / "mirror", bundle_tarball(tmp, "0.0.1", MARKER))
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_installed(prefix, ["self-update", "--mirror", url], clean_env(tmp))
        check(proc.returncode == 0 and "is up to date (the mirror offers 0.0.1)" in proc.stdout,
              f"up to date: {proc.stdout!r} {proc.stderr!r}")
        (tmp / "mirror/cudaenv/latest-linux-x86_64").write_text("$(touch pwned) ../../etc/passwd\n")
        bad = run_installed(prefix, ["self-update", "--mirror", url], clean_env(tmp))
    expect_error(bad, 6, "latest-linux-x86_64", "not a sha256 line")
    check(digests(prefix) == before, "nothing was replaced")


def strace_usable():
    """strace is installed and may trace here (a container can forbid ptrace)."""
    return bool(shutil.which("strace")) and subprocess.run(["strace", "-o", "/dev/null", "true"]).returncode == 0


def killed_update(prefix, url, env, syscall, nth):
    """self-update under strace, killed (SIGKILL, the call itself skipped) as it enters its
    `nth` call of `syscall`: the instant before that rename. True when it was killed there,
    False when it finished first (there is no such call)."""
    proc = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscall}",
                           "-e", f"inject={syscall}:error=EIO:signal=SIGKILL:when={nth}",
                           str(prefix / "bin/cudaenv"), "self-update", "--force", "--mirror", url],
                          env={**env, "ASAN_OPTIONS": "detect_leaks=0"}, capture_output=True, text=True,
                          timeout=PATIENCE)
    return proc.returncode != 0


def release_in_place(prefix, env):
    """Which release the installation runs: the marker every program it reaches carries (the
    tree bin/cudaenv leads to, and the shim path the data root's shims link to), or "mixed"."""
    tree = Path(os.path.realpath(prefix / "bin/cudaenv")).parent.parent
    files = [tree / p for p in PROGRAMS] + [prefix / "libexec/cudaenv/cudaenv-shim"]
    markers = {next((m for m in (OLD_MARKER, MARKER) if f.is_file() and f.read_bytes().endswith(m)), None)
               for f in files}
    runs = run_installed(prefix, ["list"], env).returncode == 0  # front and full together
    return {OLD_MARKER: "old", MARKER: "new"}.get(markers.pop(), None) if len(markers) == 1 and runs else "mixed"


@case
def a_kill_at_any_rename_of_an_update_leaves_it_wholly_old_or_wholly_new(tmp):
    if not strace_usable():
        print("skipped: strace (to hold self-update at its renames) is not usable here")
        return
    env = clean_env(tmp)
    serve_bundle(tmp / "mirror", bundle_tarball(tmp, "8.0.0", OLD_MARKER))
    installed = installed_bundle(tmp / "installed")
    with mirror_server(tmp / "mirror") as (url, _):
        first = run_installed(installed, ["self-update", "--mirror", url], env)
        check(first.returncode == 0, f"the first update lays the bundle out: {first.stderr!r}")
        check(release_in_place(installed, env) == "old", "8.0.0 runs")
        serve_bundle(tmp / "mirror", bundle_tarball(tmp, "9.0.0", MARKER))
        # Every rename an update makes, in order (a whole run, on a copy).
        whole = tmp / "whole"
        shutil.copytree(installed, whole, symlinks=True)
        log = tmp / "renames.log"
        traced = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e", "trace=rename,renameat,renameat2",
                                 str(whole / "bin/cudaenv"), "self-update", "--force", "--mirror", url],
                                env={**env, "ASAN_OPTIONS": "detect_leaks=0"}, capture_output=True, timeout=PATIENCE)
        check(traced.returncode == 0 and release_in_place(whole, env) == "new", "an update run whole installs 9.0.0")
        calls = [line.split()[1].split("(")[0] for line in log.read_text().splitlines() if "rename" in line] \
            if log.exists() else []
        check(calls[:1] == ["renameat2"], f"the switch is one exchange of two directories: {calls}")
        seen = []
        for index, syscall in enumerate(calls):
            prefix = tmp / f"killed-{index}"
            shutil.copytree(installed, prefix, symlinks=True)
            nth = calls[:index + 1].count(syscall)
            check(killed_update(prefix, url, env, syscall, nth), f"killed before {syscall} call {nth}")
            state = release_in_place(prefix, env)
            seen.append(state)
            check(state in ("old", "new"), f"killed before {syscall} call {nth}: {state}")
        check(seen[:1] == ["old"] and "new" in seen, f"the kills fell before and after the switch: {seen}")
        # The next update clears what the killed one left, and completes.
        again = run_installed(prefix, ["self-update", "--force", "--mirror", url], env)
        check(again.returncode == 0 and release_in_place(prefix, env) == "new", f"then it updates: {again.stderr!r}")
        check(not list((prefix / "lib/cudaenv-bundle").glob(".incoming-*")), "no staging directory is left")
        # The tree replaced stays whole for a program that was running from it.
        previous = prefix / "lib/cudaenv-bundle/previous"
        check(all((previous / p).is_file() and (previous / p).read_bytes().endswith((OLD_MARKER, MARKER))
                  for p in PROGRAMS), "previous/ is kept")
        if (previous / "bin/cudaenv").is_file():
            old = subprocess.run([str(previous / "bin/cudaenv"), "list"], env=env, capture_output=True, text=True)
            check(old.returncode == 0, f"a program of the replaced tree still finds its companions: {old.stderr!r}")


@case
def a_cudaenv_outside_a_bundle_installation_is_not_touched(tmp):
    from harness import BINARY
    proc = subprocess.run([BINARY, "self-update", "--mirror", "http://127.0.0.1:9"],
                          env=clean_env(tmp), capture_output=True, text=True, timeout=60)
    expect_error(proc, 1, "self-update replaces an installed release bundle")


finish()
