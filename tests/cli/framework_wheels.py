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
