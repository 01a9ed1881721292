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


def cached_tarball():
    """The minbase root's tarball in the test cache, made with debootstrap the first time."""
    cache = Path(os.environ.get("CUDAENV_TEST_CACHE") or Path.home() / ".cache/cudaenv-ci/downloads")
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"debian-{SUITE}-minbase.tar.gz"
    with open(cache / f".debian-{SUITE}-minbase.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one debootstrap at a time; the others wait and reuse
        if not tarball.exists():
            build = cache / f".debian-{SUITE}-minbase-{os.getpid()}"
            try:
                subprocess.run(["debootstrap", "--variant=minbase", SUITE, str(build), DEBIAN_MIRROR],
                               check=True, stdout=subprocess.DEVNULL, timeout=1200)
                subprocess.run(["tar", "-C", str(build), "-czf", f"{tarball}.tmp", "."], check=True)
                os.replace(f"{tarball}.tmp", tarball)
            finally:
                shutil.rmtree(build, ignore_errors=True)
    return tarball


def unpack(into):
    """A fresh copy of the minbase root at `into`; returns its path."""
    root = Path(into)
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-C", str(root), "-xzf", str(cached_tarball())], check=True)
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
