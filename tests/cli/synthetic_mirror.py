"""Builds mirrors in NVIDIA's redist layout from small synthetic archives, for the install tests:
<root>/<product>/redist/redistrib_<v>.json listing components whose .tar.xz archives wrap their
files in one top directory, exactly as NVIDIA packs them."""

import hashlib
import io
import json
import os
import re
import tarfile
from pathlib import Path

PLATFORM = "linux-x86_64"


def nvcc_script(release, nvcc_version):
    major_minor = ".".join(release.split(".")[:2])
    # --echo-args lets the activation tests see exactly which nvcc ran, with which arguments
    # and environment, and choose its exit status.
    return ("#!/bin/sh\n"
            'if [ "$1" = "--echo-args" ]; then\n'
            f'  shift; echo "nvcc {nvcc_version} CUDA_HOME=$CUDA_HOME"\n'
            "  for arg in \"$@\"; do printf '[%s]\\n' \"$arg\"; done\n"
            '  exit "${FAKE_NVCC_EXIT:-0}"\n'
            "fi\n"
            f'echo "nvcc: NVIDIA (R) Cuda compiler driver"\n'
            f'echo "Cuda compilation tools, release {major_minor}, V{nvcc_version}"\n')


def _add(tar, name, data=b"", mode=0o644, kind=tarfile.REGTYPE, linkname=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.linkname = linkname
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.addfile(info)


def pack(top, entries, padding=0):
    """A .tar.xz whose entries sit below `top`/. entries: (path, bytes|str, mode) for files, or
    dicts {"path", "kind": "symlink"|"hardlink"|"fifo"|"chardev"|"dir", "target", "mode"} and raw
    {"raw": name} entries that are not placed below `top`. `padding` adds incompressible bytes."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:xz") as tar:
        _add(tar, top, kind=tarfile.DIRTYPE, mode=0o755)
        for entry in entries:
            if isinstance(entry, dict):
                name = entry["raw"] if "raw" in entry else f"{top}/{entry['path']}"
                kind = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE,
                        "chardev": tarfile.CHRTYPE, "dir": tarfile.DIRTYPE, "file": tarfile.REGTYPE}[entry.get("kind", "file")]
                _add(tar, name, entry.get("data", b"x"), entry.get("mode", 0o644), kind, entry.get("target", ""))
            else:
                path, data, mode = entry
                _add(tar, f"{top}/{path}", data.encode() if isinstance(data, str) else data, mode)
        _add(tar, f"{top}/LICENSE", b"license text\n")
        if padding:
            _add(tar, f"{top}/share/padding.bin", os.urandom(padding))
    return bio.getvalue()


def write_release(root, version, components, product="cuda", label=True):
    """components: {name: (component_version, entries, padding)}. Returns the manifest dict."""
    redist = os.path.join(root, product, "redist")
    manifest = {"release_date": "2025-01-01"}
    if label:
        manifest.update({"release_label": version, "release_product": product})
    for name, (comp_version, entries, padding) in components.items():
        top = f"{name}-{PLATFORM}-{comp_version}-archive"
        relative = f"{name}/{PLATFORM}/{top}.tar.xz"
        data = pack(top, entries, padding)
        os.makedirs(os.path.join(redist, name, PLATFORM), exist_ok=True)
        with open(os.path.join(redist, relative), "wb") as f:
            f.write(data)
        manifest[name] = {"name": name.upper(), "license": "CUDA Toolkit", "version": comp_version,
                          PLATFORM: {"relative_path": relative, "sha256": hashlib.sha256(data).hexdigest(),
                                     "md5": hashlib.md5(data).hexdigest(), "size": str(len(data))}}
    os.makedirs(redist, exist_ok=True)
    with open(os.path.join(redist, f"redistrib_{version}.json"), "w") as f:
        json.dump(manifest, f, indent=4)
    return manifest


def toolkit_release(root, version, nvcc_version, padding=0):
    """A small toolkit: an nvcc that reports its version, a cudart library and a header."""
    return write_release(root, version, {
        "cuda_nvcc": (nvcc_version, [("bin/nvcc", nvcc_script(version, nvcc_version), 0o755),
                                     ("bin/nvcc.profile", "TOP = $(_HERE_)/..\n", 0o644)], padding),
        "cuda_cudart": (nvcc_version, [("lib/libcudart.so." + version.split(".")[0], "elf", 0o644),
                                       ("include/cuda_runtime.h", "/* runtime */\n", 0o644)], padding),
        "cuda_cccl": (nvcc_version, [("include/cub/cub.cuh", "/* cub */\n", 0o644)], 0),
        "nvidia_driver": ("999.99", [("bin/nvidia-smi", "#!/bin/sh\n", 0o755)], 0),
    })


def cudnn_release(root, version, build, variants=("12", "13")):
    """A cuDNN release in NVIDIA's per-CUDA-variant layout (as cuDNN 9 publishes it)."""
    root = Path(root)
    redist = root / "cudnn" / "redist"
    platform_entry = {}
    for major in variants:
        top = f"cudnn-{PLATFORM}-{build}_cuda{major}-archive"
        relative = f"cudnn/{PLATFORM}/{top}.tar.xz"
        data = pack(top, [(f"lib/libcudnn.so.{version.split('.')[0]}", f"cudnn for cuda{major}", 0o644),
                          ("include/cudnn.h", f"/* cuda{major} */\n", 0o644)])
        (redist / "cudnn" / PLATFORM).mkdir(parents=True, exist_ok=True)
        (redist / relative).write_bytes(data)
        platform_entry[f"cuda{major}"] = {"relative_path": relative, "sha256": hashlib.sha256(data).hexdigest(),
                                          "size": str(len(data))}
    manifest = {"release_date": "2024-04-12", "release_label": version, "release_product": "cudnn",
                "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn",
                          "version": build, PLATFORM: platform_entry, "cuda_variant": list(variants)}}
    (redist / f"redistrib_{version}.json").write_text(json.dumps(manifest, indent=4))


REPO_MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


def publish_database(mirror, revision):
    """The repository's database as `revision`, with its index, as `cudaenv db update` reads it."""
    db = mirror / "cudaenv" / "db"
    files = []
    for path in sorted(REPO_MANIFESTS.glob("*.toml")):
        data = re.sub(r'^revision = "[^"]+"', f'revision = "{revision}"', path.read_text(), flags=re.M).encode()
        files.append({"name": path.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        (db / revision).mkdir(parents=True, exist_ok=True)
        (db / revision / path.name).write_bytes(data)
    date = re.match(r"\d{4}-\d{2}-\d{2}", revision).group(0)
    (db / "index.json").write_text(json.dumps({"format": 1, "revision": revision, "date": date, "files": files}))
