"""`cudaenv doctor` asks the python3 on PATH once, with a bound: a Python whose `import torch`
hangs is reported as a finding instead of holding doctor, and torch's version and CUDA are read
from torch/version.py without importing torch. Real python3 (this test's own), a site-packages
of files made here, the machine's own driver side (whatever it is)."""

import os
import sys
import time
from pathlib import Path

from harness import case, check, clean_env, finish, run

# What doctor waits for the interpreter (src/probe/python_frameworks.hpp).
PROBE_TIMEOUT_S = 10


def python_with_site(tmp, files):
    """A bin directory whose python3 is this test's interpreter with a site-packages holding
    `files` ({relative path: text}) first on its path."""
    site = tmp / "site-packages"
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    home = tmp / "home"
    home.mkdir()
    return clean_env(home, PATH=f"{bin_dir}:/usr/bin:/bin")


def framework_finding(text):
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if "PyTorch built for this driver and these GPUs" in line:
            return "\n".join(lines[number:number + 6])
    raise AssertionError(f"no framework finding in:\n{text}")


@case
def a_hung_import_is_a_finding_not_a_hang(tmp):
    env = python_with_site(tmp, {"torch/__init__.py": "import time\ntime.sleep(60)\n"})
    start = time.monotonic()
    proc = run(["doctor"], env, timeout=PROBE_TIMEOUT_S + 40)
    took = time.monotonic() - start
    check(proc.returncode in (0, 1), f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    finding = framework_finding(proc.stdout)
    check(f"python3 did not answer in {PROBE_TIMEOUT_S} s" in finding, finding)
    check("warn" in finding.splitlines()[0], finding)
    # The binaries check names the same reason: the interpreter was not asked twice.
    check(f"packages were not read: {tmp}/bin/python3 did not answer in {PROBE_TIMEOUT_S} s"
          in proc.stdout, proc.stdout)
    check(took < PROBE_TIMEOUT_S + 30, f"doctor took {took:.1f} s")


@case
def torch_version_is_read_from_its_version_file_without_importing_it(tmp):
    env = python_with_site(tmp, {
        # Importing this torch would take a minute: doctor must not.
        "torch/__init__.py": "import time\ntime.sleep(60)\n",
        "torch/version.py": "from typing import Optional\n\n__all__ = ['__version__', 'cuda']\n"
                            "__version__ = '2.4.1+cu121'\ndebug = False\n"
                            "cuda: Optional[str] = '12.1'\nhip: Optional[str] = None\n",
    })
    start = time.monotonic()
    proc = run(["doctor"], env, timeout=PROBE_TIMEOUT_S + 40)
    took = time.monotonic() - start
    finding = framework_finding(proc.stdout)
    check("torch 2.4.1+cu121, torch.version.cuda 12.1" in finding, finding)
    check("did not answer" not in proc.stdout, proc.stdout)
    check(took < PROBE_TIMEOUT_S, f"doctor took {took:.1f} s: it waited on the import")


@case
def a_broken_install_without_a_version_file_is_imported_and_reported(tmp):
    env = python_with_site(tmp, {"torch/__init__.py": "import torch_missing_part\n"})
    proc = run(["doctor"], env, timeout=PROBE_TIMEOUT_S + 40)
    finding = framework_finding(proc.stdout)
    check("import torch failed: ModuleNotFoundError: No module named 'torch_missing_part'"
          in finding, finding)


finish()
