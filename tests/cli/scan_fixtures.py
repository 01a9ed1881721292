"""Shared by the scan and why tests: a real nvcc and C compiler build small libraries, and a real
virtual environment holds them as a site-packages tree would."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repack import toolkit_bin_of

KERNEL = """
__global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }
extern "C" void launch_scale(float* x) { scale<<<1, 32>>>(x, 2.0f); }
"""


def find_on_path(name):
    candidates = [shutil.which(name)]
    if os.environ.get("CUDA_HOME"):
        candidates.append(str(Path(os.environ["CUDA_HOME"]) / "bin" / name))
    candidates.append(f"/usr/local/cuda/bin/{name}")
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def find_cuda_tool(name):
    """The toolkit's own file for `name` (beside the real nvcc), else whatever PATH offers."""
    nvcc = find_on_path("nvcc")
    here = toolkit_bin_of(nvcc) if nvcc else None
    if here and os.access(here / name, os.X_OK):
        return str(here / name)
    return find_on_path(name)


def nvcc_and_scratch(prefix):
    """The real nvcc and a scratch directory removed at exit; without nvcc the file is skipped."""
    nvcc = find_cuda_tool("nvcc")
    if not nvcc:
        print("skip: no nvcc on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin to build GPU code with")
        sys.exit(77)  # CTest's SKIP_RETURN_CODE
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, scratch, True)
    return nvcc, scratch


def build_cuda_libraries(nvcc, directory, variants):
    """variants: {file name: -gencode value}; built in parallel with the real nvcc."""
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "kernel.cu"
    source.write_text(KERNEL)

    def build(item):
        name, gencode = item
        subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-gencode", gencode,
                        str(source), "-o", str(directory / name)], check=True, capture_output=True, timeout=600)

    with ThreadPoolExecutor(len(variants)) as pool:
        list(pool.map(build, variants.items()))
    return {name: directory / name for name in variants}


def make_venv(root):
    """A real venv (no pip: quick); returns (its python3, its site-packages)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python3"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    return python, Path(site)
