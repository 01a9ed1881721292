"""Small wheels in the shape of NVIDIA's CUDA wheels, for the tests of `--source pypi`: the
cuda-toolkit metapackage whose METADATA pins the component wheels, component wheels with their
files below nvidia/cu13/ (CUDA 13) or nvidia/<component>/ (CUDA 11/12, cuDNN), and the
.dist-info directory every wheel carries."""

import base64
import hashlib
import zipfile
from pathlib import Path

from synthetic_mirror import nvcc_script

MANYLINUX = "manylinux2014_x86_64.manylinux_2_17_x86_64"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(directory, project, version, files, platform=MANYLINUX, metadata_extra=""):
    """files: {path in the wheel: (bytes or str, mode)}. Returns the wheel's path."""
    stem = project.replace("-", "_")
    path = Path(directory) / f"{stem}-{version}-py3-none-{platform}.whl"
    path.parent.mkdir(parents=True, exist_ok=True)
    dist = f"{stem}-{version}.dist-info"
    entries = {name: (data.encode() if isinstance(data, str) else data, mode)
               for name, (data, mode) in files.items()}
    entries[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
                                   f"{metadata_extra}".encode(), 0o644)
    entries[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", 0o644)
    entries[f"{dist}/licenses/License.txt"] = (f"license of {project}\n".encode(), 0o644)
    record = "".join(_record_line(n, d) for n, (d, _) in entries.items()) + f"{dist}/RECORD,,\n"
    entries[f"{dist}/RECORD"] = (record.encode(), 0o644)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, (data, mode) in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2025, 10, 9, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return path


def metapackage(directory, release, pins):
    """NVIDIA's cuda-toolkit==release: Requires-Dist pins under the "all" extra, as it has them."""
    lines = "".join(f"Requires-Dist: {p}=={v}.*; (sys_platform == 'linux' or sys_platform == 'win32') "
                    f"and extra == 'all'\n" for p, v in pins.items())
    lines += "".join(f"Requires-Dist: {p}=={v}.*; (sys_platform == 'linux') and extra == 'x{i}'\n"
                     for i, (p, v) in enumerate(pins.items()))
    return write_wheel(directory, "cuda-toolkit", release, {}, platform="any",
                       metadata_extra="Provides-Extra: all\n" + lines)


CUDA13_PINS = {"nvidia-cuda-nvcc": "13.0.88", "nvidia-cuda-runtime": "13.0.96",
               "nvidia-cuda-crt": "13.0.88", "nvidia-nvvm": "13.0.88", "nvidia-cuda-cccl": "13.0.85",
               "nvidia-cublas": "13.1.0.3"}


def cuda13_release(directory, release="13.0.2", pins=CUDA13_PINS):
    """A CUDA 13 release as NVIDIA's wheels lay it out: every file below nvidia/cu13/."""
    tree = "nvidia/cu13"
    package = {"nvidia/__init__.py": ("", 0o644), f"{tree}/__init__.py": ("", 0o644)}
    contents = {
        "nvidia-cuda-nvcc": {f"{tree}/bin/nvcc": (nvcc_script(release, pins["nvidia-cuda-nvcc"]), 0o755),
                             f"{tree}/bin/ptxas": ("#!/bin/sh\necho ptxas\n", 0o755)},
        "nvidia-cuda-runtime": {f"{tree}/include/cuda_runtime.h": ("/* runtime */\n", 0o644),
                                f"{tree}/lib/libcudart.so.13": ("cudart", 0o644)},
        "nvidia-cuda-crt": {f"{tree}/include/crt/host_config.h": ("/* crt */\n", 0o644)},
        "nvidia-nvvm": {f"{tree}/nvvm/bin/cicc": ("#!/bin/sh\n", 0o755)},
        "nvidia-cuda-cccl": {f"{tree}/include/cuda/std/version": ("// cccl\n", 0o644)},
        "nvidia-cublas": {f"{tree}/lib/libcublas.so.13": ("cublas", 0o644)},
    }
    for project, version in pins.items():
        write_wheel(directory, project, version, {**package, **contents[project]})
    metapackage(directory, release, pins)


def cuda12_release(directory, release="12.8.1"):
    """A CUDA 12 release: cu12 wheels, one nvidia/<component>/ tree each, ptxas but no nvcc."""
    pins = {"nvidia-cuda-nvcc-cu12": "12.8.93", "nvidia-cuda-runtime-cu12": "12.8.90"}
    write_wheel(directory, "nvidia-cuda-nvcc-cu12", pins["nvidia-cuda-nvcc-cu12"],
                {"nvidia/cuda_nvcc/bin/ptxas": ("#!/bin/sh\necho ptxas\n", 0o755),
                 "nvidia/cuda_nvcc/__init__.py": ("", 0o644)})
    write_wheel(directory, "nvidia-cuda-runtime-cu12", pins["nvidia-cuda-runtime-cu12"],
                {"nvidia/cuda_runtime/lib/libcudart.so.12": ("cudart12", 0o644),
                 "nvidia/cuda_runtime/include/cuda_runtime_api.h": ("/* 12 */\n", 0o644)})
    metapackage(directory, release, pins)


def cudnn_wheel(directory, major, version):
    """nvidia-cudnn-cu<major>: headers and libraries below nvidia/cudnn/."""
    parts = version.split(".")
    header = (f"#define CUDNN_MAJOR {parts[0]}\n#define CUDNN_MINOR {parts[1]}\n"
              f"#define CUDNN_PATCHLEVEL {parts[2]}\n")
    return write_wheel(directory, f"nvidia-cudnn-cu{major}", version,
                       {"nvidia/cudnn/include/cudnn_version.h": (header, 0o644),
                        "nvidia/cudnn/lib/libcudnn.so." + parts[0]: (f"cudnn for cuda{major}", 0o644),
                        "nvidia/cudnn/__init__.py": ("", 0o644)})
