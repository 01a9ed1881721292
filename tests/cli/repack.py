"""Repacks real CUDA files into NVIDIA's redist layout, for the end-to-end install tests: the
parts of a toolkit installed on this machine, or NVIDIA's component wheels from PyPI. Archives
are .tar.xz with one top directory, as NVIDIA packs them (the tests use a fast xz preset; the
install benchmark packs with xz's default preset, as NVIDIA's archives are)."""

import fcntl
import hashlib
import json
import lzma
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

PLATFORM = "linux-x86_64"


def write_component(redist, name, version, sources, preset=0):
    top = f"{name}-{PLATFORM}-{version}-archive"
    relative = f"{name}/{PLATFORM}/{top}.tar.xz"
    path = os.path.join(redist, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as raw, lzma.open(raw, "wb", preset=preset) as xz, tarfile.open(fileobj=xz, mode="w|") as tar:
        info = tarfile.TarInfo(top)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        for source, arcname in sources:
            _add_tree(tar, source, f"{top}/{arcname}")
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"name": name, "license": "CUDA Toolkit", "version": version,
            PLATFORM: {"relative_path": relative, "sha256": digest.hexdigest(), "md5": "",
                       "size": str(os.path.getsize(path))}}


def _add_tree(tar, source, arcname):
    """Like tar.add, but a link to an absolute path is stored as what it points at: NVIDIA's
    archives hold only relative links, while a toolkit installed here may carry absolute ones
    (some distributions link include/Openacc elsewhere), and cudaenv rightly refuses those."""
    if os.path.islink(source) and os.path.isabs(os.readlink(source)):
        source = os.path.realpath(source)
        if not os.path.exists(source):
            return
    if os.path.isdir(source) and not os.path.islink(source):
        tar.add(source, arcname=arcname, recursive=False)
        for name in sorted(os.listdir(source)):
            _add_tree(tar, os.path.join(source, name), f"{arcname}/{name}")
    else:
        tar.add(source, arcname=arcname, recursive=False)


def write_manifest(mirror, product, version, components):
    redist = os.path.join(mirror, product, "redist")
    manifest = {"release_date": "2025-10-09", "release_label": version, "release_product": product}
    manifest.update(components)
    with open(os.path.join(redist, f"redistrib_{version}.json"), "w") as f:
        json.dump(manifest, f, indent=4)


def toolkit_bin_of(nvcc):
    """The directory nvcc really runs from: a machine may put `exec …/cuda-13.0/bin/nvcc` wrapper
    scripts on PATH, and the tests that copy a tool need the real ELF file, not the wrapper."""
    proc = subprocess.run([nvcc, "-dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                          capture_output=True, text=True, timeout=60)
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("#$ _HERE_="):
            return Path(line.split("=", 1)[1].strip())
    return None


def toolkit_prefix_of(nvcc):
    """The toolkit nvcc belongs to, also when PATH holds a wrapper script that runs it."""
    here = toolkit_bin_of(nvcc)
    return str(here.parent) if here else os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))


def _library_dir(prefix):
    for candidate in ("lib64", "lib", "targets/x86_64-linux/lib"):
        path = os.path.realpath(os.path.join(prefix, candidate))
        if os.path.isfile(os.path.join(path, "libcudart_static.a")):
            return path
    return None


def pack_system_toolkit(prefix, mirror, release, nvcc_version, preset=0):
    """cuda_nvcc (bin, nvvm) and cuda_cudart (headers, the runtime libraries) of a toolkit."""
    redist = os.path.join(mirror, "cuda", "redist")
    libdir = _library_dir(prefix)
    include = os.path.realpath(os.path.join(prefix, "include"))
    if libdir is None or not os.path.isdir(include):
        return False
    runtime_libs = [(os.path.join(libdir, n), f"lib/{n}") for n in sorted(os.listdir(libdir))
                    if n.startswith(("libcudart", "libcudadevrt", "libculibos"))]
    nvcc_parts = [(os.path.join(prefix, "bin"), "bin")]
    if os.path.isdir(os.path.join(prefix, "nvvm")):
        nvcc_parts.append((os.path.realpath(os.path.join(prefix, "nvvm")), "nvvm"))
    components = {
        "cuda_nvcc": write_component(redist, "cuda_nvcc", nvcc_version, nvcc_parts, preset),
        "cuda_cudart": write_component(redist, "cuda_cudart", nvcc_version,
                                       [(include, "include")] + runtime_libs, preset),
    }
    write_manifest(mirror, "cuda", release, components)
    return True


# NVIDIA's CUDA 13 component wheels and the redist components they correspond to.
WHEELS = {"nvidia-cuda-nvcc": "cuda_nvcc", "nvidia-cuda-runtime": "cuda_cudart", "nvidia-cuda-crt": "cuda_crt",
          "nvidia-nvvm": "libnvvm", "nvidia-cuda-cccl": "cuda_cccl"}


def download_wheels(cache, pins):
    """pins: {package: version}. Returns {package: wheel path}; raises on failure."""
    os.makedirs(cache, exist_ok=True)
    found = {}
    for package, version in pins.items():
        stem = package.replace("-", "_") + "-" + version + "-"
        existing = [n for n in os.listdir(cache) if n.startswith(stem) and n.endswith(".whl")]
        if not existing:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                            "--platform", "manylinux2014_x86_64", "--python-version", "3.12", "-q", "-d", cache,
                            f"{package}=={version}"], check=True, capture_output=True, timeout=600)
            existing = [n for n in os.listdir(cache) if n.startswith(stem) and n.endswith(".whl")]
        found[package] = os.path.join(cache, existing[0])
    return found


def pack_wheels(wheels, pins, mirror, release, workdir):
    """One redist component per wheel: the wheel's nvidia/cu13/ tree becomes the archive's content."""
    redist = os.path.join(mirror, "cuda", "redist")
    components = {}
    for package, wheel in wheels.items():
        unpacked = os.path.join(workdir, package)
        with zipfile.ZipFile(wheel) as z:
            for member in z.infolist():
                if not member.filename.startswith("nvidia/cu13/") or member.is_dir():
                    continue
                target = z.extract(member, unpacked)
                if (member.external_attr >> 16) & 0o111:
                    os.chmod(target, 0o755)
        root = os.path.join(unpacked, "nvidia", "cu13")
        parts = [(os.path.join(root, n), n) for n in sorted(os.listdir(root)) if n != "__init__.py"]
        name = WHEELS[package]
        components[name] = write_component(redist, name, pins[package], parts)
    write_manifest(mirror, "cuda", release, components)


# NVIDIA's wheel versions of two real CUDA releases, for the end-to-end tests.
WHEEL_RELEASES = {
    "13.0.2": {"nvidia-cuda-nvcc": "13.0.88", "nvidia-cuda-runtime": "13.0.96", "nvidia-cuda-crt": "13.0.88",
               "nvidia-nvvm": "13.0.88", "nvidia-cuda-cccl": "13.0.85"},
    "13.2.0": {"nvidia-cuda-nvcc": "13.2.51", "nvidia-cuda-runtime": "13.2.51", "nvidia-cuda-crt": "13.2.51",
               "nvidia-nvvm": "13.2.51", "nvidia-cuda-cccl": "13.2.27"},
}


def wheel_mirror(cache, workdir):
    """A mirror (kept under `cache`) of WHEEL_RELEASES packed from NVIDIA's wheels, or None when
    the wheels cannot be downloaded."""
    # test_cuda11, test_e2e_install and test_e2e_cmake may run at once on a cold cache: one packs
    # while the others wait, or a second packing would replace archives the first one's
    # manifest names (their xz bytes differ from run to run) and its install fails on sha256.
    Path(cache).mkdir(parents=True, exist_ok=True)
    with open(Path(cache) / "wheel-mirror.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _wheel_mirror_locked(cache, workdir)


def _wheel_mirror_locked(cache, workdir):
    mirror = Path(cache) / "wheel-mirror"
    missing = {release: pins for release, pins in WHEEL_RELEASES.items()
               if not (mirror / "cuda" / "redist" / f"redistrib_{release}.json").exists()}
    try:
        downloaded = {release: download_wheels(str(Path(cache) / "wheels"), pins) for release, pins in missing.items()}
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        print(f"skip: NVIDIA's wheels could not be downloaded ({error})")
        return None
    # Packing is not guarded: a fault there is the test's failure, never a skip.
    for release, wheels in downloaded.items():
        pack_wheels(wheels, missing[release], str(mirror), release, str(Path(workdir) / f"unpacked-{release}"))
    return mirror
