"""`cudaenv self-update`: replaces an installed release bundle with the newer one the mirror
serves (sha256-checked, file by file, bin/cudaenv last); refuses a bundle whose checksum does
not match (exit 6, nothing replaced), says when it is up to date, and refuses to touch a cudaenv
that is not a bundle installation."""

import subprocess

from bundle_helpers import bundle_tarball, digests, installed_bundle, serve_bundle
from harness import case, check, clean_env, expect_error, finish, mirror_server

MARKER = b"\0cudaenv-99.0.0-marker"


def run_installed(prefix, args, env):
    return subprocess.run([str(prefix / "bin" / "cudaenv"), *args], env=env, capture_output=True,
                          text=True, timeout=60)


@case
def a_newer_bundle_replaces_the_installed_one(tmp):
    prefix = installed_bundle(tmp / "prefix")
    serve_bundle(tmp / "mirror", bundle_tarball(tmp, "99.0.0", MARKER))
    env = clean_env(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_installed(prefix, ["self-update", "--mirror", url], env)
    check(proc.returncode == 0, f"self-update succeeds: {proc.stderr!r}")
    check("to 99.0.0" in proc.stdout, f"it says what it installed: {proc.stdout!r}")
    for program in ("bin/cudaenv", "libexec/cudaenv/cudaenv-full", "libexec/cudaenv/cudaenv-shim"):
        check((prefix / program).read_bytes().endswith(MARKER), f"{program} is the new one")
    check((prefix / "share/cudaenv/VERSION").read_text() == "99.0.0\n", "new files arrive too")
    check(not list(prefix.glob(".cudaenv-update-*")), "no staging directory is left")
    again = run_installed(prefix, ["--version"], env)
    check(again.returncode == 0 and again.stdout.startswith("cudaenv "), "the new cudaenv runs")


@case
def a_checksum_mismatch_replaces_nothing(tmp):
    prefix = installed_bundle(tmp / "prefix")
    before = digests(prefix)
    serve_bundle(tmp / "mirror", bundle_tarball(tmp, "99.0.0", MARKER), sha256="0" * 64)
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_installed(prefix, ["self-update", "--mirror", url], clean_env(tmp))
    expect_error(proc, 6, "sha256 mismatch", "cudaenv-99.0.0-linux-x86_64.tar.gz")
    check(digests(prefix) == before, "every installed file is unchanged")
    check(not list(prefix.glob(".cudaenv-*")), "no staging directory is left")


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


@case
def a_cudaenv_outside_a_bundle_installation_is_not_touched(tmp):
    from harness import BINARY
    proc = subprocess.run([BINARY, "self-update", "--mirror", "http://127.0.0.1:9"],
                          env=clean_env(tmp), capture_output=True, text=True, timeout=60)
    expect_error(proc, 1, "self-update replaces an installed release bundle")


finish()
