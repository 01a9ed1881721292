"""A mirror made with `cudaenv mirror create --with-cudaenv BUNDLE` serves the bundle, its
sha256 line and scripts/get-cudaenv as cudaenv/get; that script, run by dash (a plain POSIX sh)
as `curl -fsSL $MIRROR/cudaenv/get | sh -s -- $MIRROR PREFIX`, installs a cudaenv that runs
into an empty prefix, and refuses a bundle whose checksum does not match."""

import os
import shutil
import subprocess
from pathlib import Path

from bundle_helpers import bundle_tarball, digests
from harness import SKIP, case, check, clean_env, expect_error, finish, mirror_server, run

if not shutil.which("dash") or not shutil.which("curl"):
    print("skipped: needs dash and curl")
    raise SystemExit(SKIP)


def get_cudaenv(url, prefix, env):
    """The documented one-liner, with the get script the mirror serves."""
    line = 'curl -fsSL "$1/cudaenv/get" | dash -s -- "$1" "$2"'
    return subprocess.run(["dash", "-c", line, "sh", url, str(prefix)], env=env,
                          capture_output=True, text=True, timeout=120)


@case
def get_cudaenv_installs_the_mirrors_bundle_into_an_empty_prefix(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    bundle = bundle_tarball(tmp, "0.9.0")
    created = run(["mirror", "create", str(tmp / "mirror"), "--with-cudaenv", str(bundle)], env)
    check(created.returncode == 0, f"mirror create --with-cudaenv succeeds: {created.stderr!r}")
    served = tmp / "mirror" / "cudaenv"
    check((served / "releases" / bundle.name).read_bytes() == bundle.read_bytes(), "the bundle is served")
    check((served / "get").read_text() == (Path(__file__).parents[2] / "scripts/get-cudaenv").read_text(),
          "cudaenv/get is scripts/get-cudaenv")
    check((served / "latest-linux-x86_64").read_text().endswith(f"  {bundle.name}\n"), "the sha256 line names it")
    prefix = tmp / "empty prefix"
    with mirror_server(tmp / "mirror") as (url, _):
        proc = get_cudaenv(url, prefix, env)
    check(proc.returncode == 0, f"get-cudaenv succeeds: {proc.stderr!r}")
    check((prefix / "share/cudaenv/VERSION").read_text() == "0.9.0\n", "the bundle's files are in place")
    version = subprocess.run([str(prefix / "bin/cudaenv"), "--version"], env=env, capture_output=True, text=True)
    check(version.returncode == 0 and version.stdout.startswith("cudaenv "), f"it runs: {version!r}")
    info = subprocess.run([str(prefix / "bin/cudaenv"), "list"], env=env, capture_output=True, text=True)
    check(info.returncode == 0, f"the full program is found beside it: {info.stderr!r}")
    check(not list(prefix.rglob(".get-*")), "no temporary directory is left")
    check(os.readlink(prefix / "bin/cudaenv") == "../lib/cudaenv-bundle/current/bin/cudaenv"
          and (prefix / "lib/cudaenv-bundle/current/libexec/cudaenv/cudaenv-full").is_file(),
          "the layout self-update switches in one step: the tree in lib/cudaenv-bundle/current, linked")


@case
def a_checksum_mismatch_installs_nothing(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    bundle = bundle_tarball(tmp, "0.9.0")
    run(["mirror", "create", str(tmp / "mirror"), "--with-cudaenv", str(bundle)], env, check_exit=0)
    latest = tmp / "mirror/cudaenv/latest-linux-x86_64"
    latest.write_text("0" * 64 + latest.read_text()[64:])
    prefix = tmp / "prefix"
    with mirror_server(tmp / "mirror") as (url, _):
        proc = get_cudaenv(url, prefix, env)
    check(proc.returncode == 6 and "sha256 mismatch" in proc.stderr, f"refused: {proc.returncode} {proc.stderr!r}")
    check(digests(prefix) == {}, f"nothing installed: {digests(prefix)}")


def piped_with_no_argument(url, env):
    """`curl -fsSL URL/cudaenv/get | sh`, exactly: no argument, no CUDAENV_MIRROR."""
    return subprocess.run(["dash", "-c", 'curl -fsSL "$1/cudaenv/get" | dash', "sh", url], env=env,
                          capture_output=True, text=True, timeout=120)


@case
def a_mirror_made_with_its_url_installs_with_a_bare_pipe_to_sh(tmp):
    home = tmp / "home"
    home.mkdir()
    env = clean_env(home, CUDAENV_ROOT=tmp / "root")
    bundle = bundle_tarball(tmp, "0.9.0")
    with mirror_server(tmp / "mirror") as (url, _):
        created = run(["mirror", "create", str(tmp / "mirror"), "--with-cudaenv", str(bundle), "--url", url + "/"], env)
        check(created.returncode == 0, f"mirror create --url succeeds: {created.stderr!r}")
        check(f"curl -fsSL {url}/cudaenv/get | sh\n" in created.stderr, f"it says how to install: {created.stderr!r}")
        proc = piped_with_no_argument(url, env)
    check(proc.returncode == 0, f"curl … | sh with no argument installs: {proc.returncode} {proc.stderr!r}")
    prefix = home / ".local"
    check((prefix / "share/cudaenv/VERSION").is_file(), "into ~/.local, the default prefix")
    version = subprocess.run([str(prefix / "bin/cudaenv"), "--version"], env=env, capture_output=True, text=True)
    check(version.returncode == 0 and version.stdout.startswith("cudaenv "), f"it runs: {version!r}")
    served = tmp / "mirror/cudaenv/get"
    script = served.read_text() if served.exists() else ""
    check(f"\nbaked_mirror='{url}'\n" in script, "the URL is written into the served script, quoted")


@case
def without_a_known_url_the_bare_pipe_names_the_fix_and_a_bad_url_is_refused(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    bundle = bundle_tarball(tmp, "0.9.0")
    run(["mirror", "create", str(tmp / "mirror"), "--with-cudaenv", str(bundle)], env, check_exit=0)
    with mirror_server(tmp / "mirror") as (url, _):
        proc = piped_with_no_argument(url, env)
    check(proc.returncode == 2 and "no mirror URL" in proc.stderr and "--url URL" in proc.stderr
          and 'sh -s -- "$MIRROR"' in proc.stderr, f"the error names both fixes: {proc.returncode} {proc.stderr!r}")
    check(not (tmp / ".local").exists(), "nothing was installed")
    for bad in ("ftp://mirror/x", "http://mirror/x'; touch /tmp/pwned; '", "http://mirror/a b"):
        proc = run(["mirror", "create", str(tmp / "m2"), "--with-cudaenv", str(bundle), "--url", bad], env)
        expect_error(proc, 2, "--url", "is not an http:// or https:// URL")
    proc = run(["mirror", "create", str(tmp / "m3"), "--url", "http://mirror/x", "--cuda", "12.4"], env)
    expect_error(proc, 2, "--url", "--with-cudaenv")
    check(not (tmp / "m2/cudaenv/get").exists(), "no script was written for a refused URL")


@case
def mirror_create_refuses_what_is_not_a_bundle(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    wrong_name = tmp / "cudaenv.tar.gz"
    shutil.copy(bundle_tarball(tmp, "0.9.0"), wrong_name)
    proc = run(["mirror", "create", str(tmp / "m1"), "--with-cudaenv", str(wrong_name)], env)
    expect_error(proc, 2, "--with-cudaenv", "is not named as a release bundle")
    not_tar = tmp / "cudaenv-1.0.0-linux-x86_64.tar.gz"
    not_tar.write_text("hello")
    proc = run(["mirror", "create", str(tmp / "m2"), "--with-cudaenv", str(not_tar)], env)
    expect_error(proc, 2, "--with-cudaenv", str(not_tar))
    check(not (tmp / "m1" / "cudaenv" / "latest-linux-x86_64").exists(), "nothing announced")


finish()
