#!/usr/bin/env python3
"""Debian's real CUDA 11.8 (non-free `nvidia-cuda-toolkit` 11.8.89) and Debian 13's glibc 2.41
headers, fetched with apt-get download into a private apt state and unpacked with dpkg-deb,
never installed. Cached under $CUDAENV_TEST_CACHE (default ~/.cache/cudaenv-ci/downloads).

What is taken, and why (download sizes of bookworm's 11.8.89~11.8.0-5~deb12u1):
  nvidia-cuda-toolkit  84 MB  nvcc, cicc, ptxas, fatbinary, nvlink, cudafe++, /etc/nvcc.profile
  libnvvm4              8 MB  libnvvm.so.4, which cicc loads
  libcudart11.0       0.2 MB  libcudart.so.11.0, the shared runtime
  nvidia-cuda-dev     774 MB  only /usr/include (13 MB) and the cudart/cudadevrt/culibos
                              libraries plus the libcuda stub are unpacked from it; the rest
                              (cuBLAS, cuFFT, NPP … static libraries) is left in the archive
  libc6-dev (trixie)    2 MB  glibc 2.41's headers, the ones that clash with nvcc < 12.9
Everything else nvidia-cuda-dev depends on (libcuda1 from the driver above all) is not fetched.

Usage: python3 tests/cli/debian_cuda.py [--timing]   prints the unpacked root's path.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import time

SUITES = (
    "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
    "http://deb.debian.org/debian bookworm non-free\n"
    "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
    "http://deb.debian.org/debian trixie main\n"
)
CUDA_PACKAGES = ["nvidia-cuda-toolkit", "libnvvm4", "libcudart11.0", "nvidia-cuda-dev"]
GLIBC_PACKAGE = "libc6-dev/trixie"
# The parts of nvidia-cuda-dev a CPU-side build needs (tar patterns inside the .deb).
DEV_MEMBERS = [
    "./usr/include/*",
    "./usr/lib/x86_64-linux-gnu/libcudart.so",
    "./usr/lib/x86_64-linux-gnu/libcudart_static.a",
    "./usr/lib/x86_64-linux-gnu/libcudadevrt.a",
    "./usr/lib/x86_64-linux-gnu/libculibos.a",
    "./usr/lib/x86_64-linux-gnu/stubs/libcuda.so",
]
SKIPPED = ["./usr/lib/nvidia-cuda-toolkit/compute-sanitizer/*", "./usr/share/*"]
CUDA_VERSION = "11.8.89~11.8.0-5~deb12u1"


def cache_dir():
    base = os.environ.get("CUDAENV_TEST_CACHE") or os.path.expanduser(
        "~/.cache/cudaenv-ci/downloads")
    return pathlib.Path(base) / "debian-apt"


def apt_options(cache):
    return ["-o", f"Dir::Etc::SourceList={cache}/sources.list",
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={cache}/lists",
            "-o", f"Dir::Cache={cache}/cache",
            "-o", "Dir::State::status=/dev/null",
            "-o", "Debug::NoLocking=1"]


def debs(cache, name):
    return sorted((cache / "debs").glob(name.split("/")[0] + "_*.deb"))


def download(cache, packages):
    missing = [p for p in packages if not debs(cache, p)]
    if not missing:
        return
    for sub in ("lists/partial", "cache/archives/partial", "debs"):
        (cache / sub).mkdir(parents=True, exist_ok=True)
    (cache / "sources.list").write_text(SUITES)
    options = apt_options(cache)
    subprocess.run(["apt-get", *options, "-qq", "update"], check=True)
    subprocess.run(["apt-get", *options, "-qq", "download", *missing], check=True,
                   cwd=cache / "debs")


def unpack(deb, target, members=None, excluded=()):
    """The files of `deb` (or only `members`) below `target`, as dpkg -x would put them."""
    target.mkdir(parents=True, exist_ok=True)
    tar = ["tar", "-x", "-C", str(target), "--wildcards"]
    tar += [f"--exclude={pattern}" for pattern in excluded]
    tar += members or []
    feed = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    subprocess.run(tar, stdin=feed.stdout, check=True)
    if feed.wait() != 0:
        raise RuntimeError(f"dpkg-deb failed on {deb}")


def write_dpkg_status(root):
    """The dpkg record an `apt install nvidia-cuda-toolkit` leaves, for probes of the root."""
    status = root / "var/lib/dpkg/status"
    status.parent.mkdir(parents=True, exist_ok=True)
    status.write_text("".join(
        f"Package: {name}\nStatus: install ok installed\nArchitecture: amd64\n"
        f"Version: {CUDA_VERSION}\n\n"
        for name in ("nvidia-cuda-toolkit", "nvidia-cuda-dev", "libcudart11.0")))


def cuda_root():
    """A directory holding Debian's 11.8 as `apt install` lays it out (usr/bin/nvcc, …)."""
    cache = cache_dir()
    root = cache / "cuda-11.8-root"
    if (root / ".complete").exists():
        return root
    download(cache, CUDA_PACKAGES)
    staging = cache / "cuda-11.8-root.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for package in CUDA_PACKAGES[:3]:
        unpack(debs(cache, package)[-1], staging, excluded=SKIPPED)
    unpack(debs(cache, "nvidia-cuda-dev")[-1], staging, DEV_MEMBERS)
    write_dpkg_status(staging)
    (staging / ".complete").write_text(CUDA_VERSION + "\n")
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    return root


def glibc_root():
    """Debian 13's libc6-dev (glibc 2.41 headers) unpacked: usr/include/…"""
    cache = cache_dir()
    root = cache / "glibc-2.41-root"
    if (root / ".complete").exists():
        return root
    download(cache, [GLIBC_PACKAGE])
    shutil.rmtree(root, ignore_errors=True)
    unpack(debs(cache, GLIBC_PACKAGE)[-1], root)
    (root / ".complete").write_text("libc6-dev trixie\n")
    return root


# nvcc's own profile for NVIDIA's redist layout (Debian's names absolute /usr paths instead).
REDIST_PROFILE = """TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""
NVCC_TOOLS = ["ptxas", "fatbinary", "nvlink", "cudafe++", "bin2c", "cu++filt", "nvprune", "cuobjdump"]
RUNTIME_LIBS = ["libcudart.so", "libcudart.so.11.0", "libcudart.so.11.8.89", "libcudart_static.a",
                "libcudadevrt.a", "libculibos.a"]
RELEASE, NVCC = "11.8.0", "11.8.89"


def redist_mirror():
    """A mirror holding Debian's 11.8 files repacked as NVIDIA's redist components cuda_nvcc
    and cuda_cudart with redistrib_11.8.0.json: what `cudaenv install 11.8.0` reads."""
    import repack
    cache = cache_dir()
    mirror = cache / "cuda-11.8-mirror"
    if (mirror / ".complete").exists():
        return mirror
    root = cuda_root()
    shutil.rmtree(mirror, ignore_errors=True)
    stage = cache / "cuda-11.8-mirror.stage"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    (stage / "nvcc.profile").write_text(REDIST_PROFILE)
    libexec = root / "usr/lib/nvidia-cuda-toolkit"
    lib = root / "usr/lib/x86_64-linux-gnu"
    nvcc_parts = [(libexec / "bin/nvcc", "bin/nvcc"), (stage / "nvcc.profile", "bin/nvcc.profile"),
                  (libexec / "bin/crt", "bin/crt"), (libexec / "bin/cicc", "nvvm/bin/cicc"),
                  (libexec / "libdevice", "nvvm/libdevice"),
                  (lib / "libnvvm.so.4.0.0", "nvvm/lib64/libnvvm.so.4")]
    nvcc_parts += [(root / "usr/bin" / tool, f"bin/{tool}") for tool in NVCC_TOOLS]
    cudart_parts = [(root / "usr/include", "include"), (lib / "stubs", "lib/stubs")]
    cudart_parts += [(lib / name, f"lib/{name}") for name in RUNTIME_LIBS]
    redist = mirror / "cuda" / "redist"
    components = {
        "cuda_nvcc": repack.write_component(str(redist), "cuda_nvcc", NVCC,
                                            [(str(a), b) for a, b in nvcc_parts]),
        "cuda_cudart": repack.write_component(str(redist), "cuda_cudart", NVCC,
                                              [(str(a), b) for a, b in cudart_parts]),
    }
    repack.write_manifest(str(mirror), "cuda", RELEASE, components)
    shutil.rmtree(stage, ignore_errors=True)
    (mirror / ".complete").write_text(RELEASE + "\n")
    return mirror


if __name__ == "__main__":
    start = time.monotonic()
    print(cuda_root())
    print(glibc_root())
    print(redist_mirror())
    if "--timing" in sys.argv:
        print(f"{time.monotonic() - start:.1f} s", file=sys.stderr)
