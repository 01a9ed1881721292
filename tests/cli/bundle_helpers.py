"""Release-bundle fixtures for the self-update and get-cudaenv tests: a tarball in the bundle's
layout (what scripts/package writes) made from the programs under test, and an installed copy
of that layout, so `cudaenv self-update` has a bundle installation to replace."""

import hashlib
import io
import os
import shutil
import tarfile
from pathlib import Path

from harness import BINARY

PROGRAMS = {"bin/cudaenv": "cudaenv", "libexec/cudaenv/cudaenv-full": "cudaenv-full",
            "libexec/cudaenv/cudaenv-shim": "cudaenv-shim"}


def build_program(name):
    return Path(os.path.dirname(BINARY)) / name


def bundle_tarball(into, version, marker=b""):
    """cudaenv-<version>-linux-x86_64.tar.gz below `into`, holding the programs under test with
    `marker` appended (bytes after an ELF file's end change nothing when it runs, but tell the
    copies apart) and a share/cudaenv/VERSION file. Returns its path."""
    top = f"cudaenv-{version}-linux-x86_64"
    path = Path(into) / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:  # fast: the tests make several
        for inside, name in PROGRAMS.items():
            data = build_program(name).read_bytes() + marker
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
