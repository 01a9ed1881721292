"""Framework wheels for the tests of `cudaenv lock`: small real wheels named as PyTorch's own
index and PyPI name them, served on loopback by pypi_index.py, which answers both as PyPI
(/simple/<project>/) and as PyTorch's per-build indexes (/whl/<build>/<project>/)."""

import contextlib

from harness import loopback_server
from synthetic_wheels import write_wheel


def framework_wheel(directory, project, version, platform="linux_x86_64"):
    """A wheel of `project` at `version` ("2.5.1+cu124") for `platform`."""
    return write_wheel(directory, project, version, {f"{project}/__init__.py": ("", 0o644)}, platform=platform)


@contextlib.contextmanager
def framework_index(wheels, settings=None):
    """Serves `wheels`; yields (base URL, control file): <base>/simple is a PyPI, <base>/whl
    stands for https://download.pytorch.org/whl."""
    with loopback_server("pypi_index.py", wheels, settings, "control.json") as served:
        yield served


def torch_wheel(directory, version, cuda="12.4", cudnn=90100, platform="linux_x86_64"):
    """A small `torch` at `version` that answers as PyTorch does what `cudaenv sync` and `verify`
    ask: torch.version.cuda, torch.backends.cudnn.version() (cuDNN's encoded number, 90100 for
    9.1.0), and a torch.cuda that sees no GPU."""
    files = {
        "torch/__init__.py": (f"__version__ = {version!r}\nfrom torch import backends, cuda, version\n", 0o644),
        "torch/version.py": (f"__version__ = {version!r}\ncuda = {cuda!r}\n", 0o644),
        "torch/backends/__init__.py": ("from torch.backends import cudnn\n", 0o644),
        "torch/backends/cudnn/__init__.py": (f"def version():\n    return {cudnn!r}\n", 0o644),
        "torch/cuda/__init__.py": ("def is_available():\n    return False\n\n\ndef device_count():\n"
                                   "    return 0\n\n\ndef get_arch_list():\n    return []\n", 0o644),
    }
    return write_wheel(directory, "torch", version, files, platform=platform)


def companion_wheel(directory, project, version, requires_torch=None, platform="linux_x86_64"):
    """A companion of torch (flash-attn, xformers) at `version` ("2.7.4+cu124torch2.5"): its module
    (flash_attn) imports torch, as the real extensions load torch's libraries, and its METADATA
    says `Requires-Dist: torch<requires_torch>` ("==2.5.1"; "" for an unpinned torch; None: no
    requirement on torch)."""
    module = project.replace("-", "_")
    code = f"import torch\n__version__ = {version!r}\n"
    extra = "" if requires_torch is None else (f"Requires-Dist: torch{requires_torch}\n"
                                               "Requires-Dist: einops; extra == 'x'\n")
    return write_wheel(directory, project, version, {f"{module}/__init__.py": (code, 0o644)},
                       platform=platform, metadata_extra=extra)
