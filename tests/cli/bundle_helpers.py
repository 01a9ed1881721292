"""Release-bundle fixtures for the self-update and get-cudaenv tests: a tarball in the bundle's
layout (what scripts/package writes) made from the programs under test, and an installed copy
of that layout, so `cudaenv self-update` has a bundle installation to replace."""

import functools
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from harness import BINARY

PROGRAMS = {"bin/cudaenv": "cudaenv", "libexec/cudaenv/cudaenv-full": "cudaenv-full",
            "libexec/cudaenv/cudaenv-shim": "cudaenv-shim"}


def build_program(name):
    return Path(os.path.dirname(BINARY)) / name


@functools.cache
def built_version():
    """The version the programs under test print ("0.1.0")."""
    return subprocess.run([BINARY, "--version"], capture_output=True, text=True, timeout=60).stdout.split()[1]


def printing(data, version):
    """A program's bytes changed so that its --version prints `version`: the NUL-terminated
    "cudaenv <v>" and "cudaenv-shim <v>" strings rewritten in place (a version no longer than
    the built one's, padded with NULs), so a test bundle can announce a release and carry
    programs that say so, or say something else."""
    built = built_version()
    if len(version) > len(built):
        raise ValueError(f"a test bundle's version must be at most {len(built)} characters: {version}")
    found = False
    for name in (b"cudaenv ", b"cudaenv-shim "):
        old = name + built.encode() + b"\0"
        found = found or old in data
        data = data.replace(old, (name + version.encode()).ljust(len(old), b"\0"))
    if not found:
        raise AssertionError("no version string to rewrite in a program under test")
    return data


def bundle_tarball(into, version, marker=b"", prints=None, replaced=None):
    """cudaenv-<version>-linux-x86_64.tar.gz below `into`, holding the programs under test with
    `marker` appended (bytes after an ELF file's end change nothing when it runs, but tell the
    copies apart) and a share/cudaenv/VERSION file. Its programs print `prints` (default:
    `version`) for --version; `replaced` maps a program's path to bytes that take its place.
    Returns its path."""
    top = f"cudaenv-{version}-linux-x86_64"
    path = Path(into) / f"{top}.tar.gz"
    replaced = replaced or {}
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:  # fast: the tests make several
        for inside, name in PROGRAMS.items():
            data = replaced.get(inside)
            if data is None:
                data = printing(build_program(name).read_bytes(), prints or version) + marker
            info = tarfile.TarInfo(f"{top}/{inside}")
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
        note = f"{version}\n".encode()
        info = tarfile.TarInfo(f"{top}/share/cudaenv/VERSION")
        info.size = len(note)
        tar.addfile(info, io.BytesIO(note))
    return path


def serve_bundle(mirror, tarball, sha256=None):
    """Puts `tarball` on the mirror directory as `mirror create --with-cudaenv` lays it out,
    announcing `sha256` (default: the tarball's own)."""
    releases = Path(mirror) / "cudaenv" / "releases"
    releases.mkdir(parents=True, exist_ok=True)
    shutil.copy(tarball, releases / tarball.name)
    sha256 = sha256 or hashlib.sha256(tarball.read_bytes()).hexdigest()
    (Path(mirror) / "cudaenv" / "latest-linux-x86_64").write_text(f"{sha256}  {tarball.name}\n")


def installed_bundle(prefix):
    """The programs under test installed in the bundle layout below `prefix`."""
    for inside, name in PROGRAMS.items():
        (Path(prefix) / inside).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(build_program(name), Path(prefix) / inside)
    return Path(prefix)


def digests(prefix):
    """{relative path: sha256} of every file below `prefix`."""
    return {str(p.relative_to(prefix)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(prefix).rglob("*")) if p.is_file()}
