"""NVIDIA-style CUDA forward-compatibility packages for the tests: a shared library carrying the
ELF note NVIDIA's libcuda.so.<driver> has (.note.cuda.fwd_compatibility, owner "NVIDIA
Corporation", a JSON description -- as readelf -n shows it in cuda-compat-13-0 on the GPU
machine, shared/data/compat-facts.md), packed by dpkg-deb as cuda-compat-X-Y with its files in
usr/local/cuda-X.Y/compat/, and an apt repository's Packages index naming it."""

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

NOTE_C = r"""
struct note { unsigned namesz, descsz, type; char name[20]; char desc[%(size)d]; };
__attribute__((section(".note.cuda.fwd_compatibility"), aligned(4), used))
static const struct note fwd = { 19, %(descsz)d, 0, "NVIDIA Corporation", %(desc)s };
int cuInit(unsigned flags) { return (int)flags; }
"""


def compat_library(directory, driver, cuda, branches, note=True):
    """Builds <directory>/libcuda.so.<driver> with the note (or none) and its soname links."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "note.c"
    description = json.dumps({"format": 1, "CUDA version": cuda, "driver": branches,
                              "device": [1, 2, 7, 8, 9, 10]}, separators=(",", ":")) + "\0"
    size = (len(description) + 3) // 4 * 4
    literal = '"' + description.replace('"', '\\"').replace("\0", "\\0") + '"'
    text = NOTE_C % {"size": size, "descsz": len(description), "desc": literal}
    if not note:
        text = "int cuInit(unsigned flags) { return (int)flags; }\n"
    source.write_text(text)
    library = directory / f"libcuda.so.{driver}"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source),
                    "-Wl,-soname,libcuda.so.1"], check=True)
    source.unlink()
    os.symlink(library.name, directory / "libcuda.so.1")
    os.symlink("libcuda.so.1", directory / "libcuda.so")
    (directory / f"libnvidia-ptxjitcompiler.so.{driver}").write_bytes(b"\x7fELF stand-in\n")
    return library


def compat_deb(out_dir, cuda, driver, branches, revision="0ubuntu1", note_cuda=None, note=True):
    """dpkg-deb builds cuda-compat-X-Y_<driver>-<revision>_amd64.deb; returns its path."""
    major, minor = cuda.split(".")
    name = f"cuda-compat-{major}-{minor}"
    tree = Path(out_dir) / f"{name}-{driver}-tree"
    compat_library(tree / f"usr/local/cuda-{cuda}/compat", driver, note_cuda or cuda, branches, note)
    doc = tree / "usr/share/doc" / name
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("NVIDIA Software License\n")
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {driver}-{revision}\nArchitecture: amd64\n"
        "Maintainer: cudaenv tests <tests@example.invalid>\n"
        f"Description: CUDA Compatibility Platform {cuda} (test package)\n")
    deb = Path(out_dir) / f"{name}_{driver}-{revision}_amd64.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(tree), str(deb)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(tree)
    return deb


def stanza(deb, sha256=None):
    data = deb.read_bytes()
    control = subprocess.run(["dpkg-deb", "--field", str(deb), "Package", "Version"],
                             check=True, capture_output=True, text=True).stdout
    return (control.strip() + "\nArchitecture: amd64\n"
            f"Filename: ./{deb.name}\nSize: {len(data)}\n"
            f"SHA256: {sha256 or hashlib.sha256(data).hexdigest()}\n")


def apt_repository(repo, debs, sha256_of=None):
    """Writes <repo>/Packages for `debs` (already in `repo`); sha256_of maps a deb to a digest to
    list instead of its own."""
    sha256_of = sha256_of or {}
    text = "\n".join(stanza(deb, sha256_of.get(deb.name)) for deb in debs)
    (Path(repo) / "Packages").write_text(text)
