"""A minimal Debian 12 root (`debootstrap --variant=minbase bookworm`) for the tests that run the
release bundle, or a generated recipe's steps, on a machine with nothing but a base system: no
compiler, no libcurl, no libarchive. debootstrap runs once; its root is kept as a tarball in
$CUDAENV_TEST_CACHE and unpacked afresh for each test. Commands run in it through chroot, inside
a private mount namespace (unshare) holding its /proc and /dev, so nothing stays mounted when the
test ends, however it ends. Needs root (chroot, mount) and, the first time, the network."""

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

SKIP = 77
SUITE = "bookworm"
DEBIAN_MIRROR = os.environ.get("CUDAENV_TEST_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def skip_unless_possible():
    """Exits with CTest's skip code, saying why, where a root cannot be built or entered."""
    missing = [tool for tool in ("debootstrap", "unshare", "chroot") if not shutil.which(tool)]
    if os.geteuid() != 0 or missing:
        print(f"skipped: needs root and {', '.join(missing) or 'chroot'} (scripts/deps --test)")
        sys.exit(SKIP)


def cached_tarball(packages=()):
    """The minbase root's tarball in the test cache, made with debootstrap the first time; with
    `packages`, the root with those Debian packages added (apt-get inside it, once)."""
    cache = Path(os.environ.get("CUDAENV_TEST_CACHE") or Path.home() / ".cache/cudaenv-ci/downloads")
    cache.mkdir(parents=True, exist_ok=True)
    name = "-".join([f"debian-{SUITE}-minbase", *packages])
    tarball = cache / f"{name}.tar.gz"
    with open(cache / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one root built at a time; the others wait and reuse
        if not tarball.exists():
            build = cache / f".{name}-{os.getpid()}"
            try:
                _make_root(build, packages)
                subprocess.run(["tar", "-C", str(build), "-czf", f"{tarball}.tmp", "."], check=True)
                os.replace(f"{tarball}.tmp", tarball)
            finally:
                shutil.rmtree(build, ignore_errors=True)
    return tarball


def _make_root(build, packages):
    if not packages:
        subprocess.run(["debootstrap", "--variant=minbase", SUITE, str(build), DEBIAN_MIRROR],
                       check=True, stdout=subprocess.DEVNULL, timeout=1200)
        return
    build.mkdir()
    subprocess.run(["tar", "-C", str(build), "-xzf", str(cached_tarball())], check=True)
    added = run(build, "apt-get update -qq && apt-get install -y -qq --no-install-recommends "
                + " ".join(packages) + " && apt-get clean", timeout=1200,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"})
    if added.returncode != 0:
        raise RuntimeError(f"apt-get install {packages} in the minbase root failed: {added.stderr}")


def unpack(into, packages=()):
    """A fresh copy of the minbase root (with `packages` added) at `into`; returns its path."""
    root = Path(into)
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-C", str(root), "-xzf", str(cached_tarball(packages))], check=True)
    return root


# Mounts /proc and /dev in the root, inside the namespace unshare made, then enters it.
_ENTER = ('mount -t proc proc "$1/proc" && mount --bind /dev "$1/dev" && '
          'root=$1 && shift && exec chroot "$root" "$@"')


def run(root, script, env=None, timeout=120):
    """Runs `script` with /bin/sh inside the root; a minimal environment unless `env` is given."""
    env = env or {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    argv = ["unshare", "--mount", "--propagation", "private", "--fork", "sh", "-c", _ENTER, "sh",
            str(root), "/usr/bin/env", "-i", *[f"{k}={v}" for k, v in env.items()], "/bin/sh", "-c", script]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
