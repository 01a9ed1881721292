"""Framework wheels for the tests of `cudaenv lock`: small real wheels named as PyTorch's own
index and PyPI name them, served on loopback by pypi_index.py, which answers both as PyPI
(/simple/<project>/) and as PyTorch's per-build indexes (/whl/<build>/<project>/)."""

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from synthetic_wheels import write_wheel


def framework_wheel(directory, project, version, platform="linux_x86_64"):
    """A wheel of `project` at `version` ("2.5.1+cu124") for `platform`."""
    return write_wheel(directory, project, version, {f"{project}/__init__.py": ("", 0o644)}, platform=platform)


@contextlib.contextmanager
def framework_index(wheels, settings=None):
    """Serves `wheels`; yields (base URL, control file): <base>/simple is a PyPI, <base>/whl
    stands for https://download.pytorch.org/whl."""
    control = Path(tempfile.mkdtemp(prefix="cudaenv-index-"))
    control_path = control / "control.json"
    control_path.write_text(json.dumps(settings or {}))
    server = subprocess.Popen([sys.executable, str(Path(__file__).parent / "pypi_index.py"), str(wheels),
                               str(control_path)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        yield f"http://127.0.0.1:{port}", control_path
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(control, ignore_errors=True)
