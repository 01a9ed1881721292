"""`cudaenv doctor`'s PyTorch check on this machine with a real virtual environment first on PATH.
A venv's python3 is a link to the base interpreter: run through the link's target it sees the
base's packages, so torch installed in the venv read as "torch is not installed". The torch here is
a small real package tree in the venv (a CUDA build of torch is gigabytes), answering what the
probe asks: its version, torch.version.cuda and the arch flags of its build."""

import json
import sys

from harness import case, check, clean_env, finish, run
from scan_fixtures import make_venv

TORCH_INIT = """
from . import version, _C, cuda
__version__ = "2.11.0+cu130"
"""


def venv_with_torch(tmp, init=TORCH_INIT):
    python, site = make_venv(tmp / "venv")
    torch = site / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text(init)
    (torch / "version.py").write_text('cuda = "13.0"\n')
    (torch / "_C.py").write_text('def _cuda_getArchFlags():\n    return "sm_80 sm_90 sm_100 sm_120"\n')
    (torch / "cuda.py").write_text("def get_arch_list():\n    return []\n")
    (tmp / "home").mkdir()
    return python, clean_env(tmp / "home", PATH=f"{python.parent}:/usr/bin:/bin")


def pytorch_finding(proc):
    report = json.loads(proc.stdout)
    return next(f for f in report["findings"] if f["id"] == "framework")


@case
def torch_in_the_active_venv_is_found(tmp):
    python, env = venv_with_torch(tmp)
    finding = pytorch_finding(run(["doctor", "--json"], env))
    check("not installed" not in finding["summary"], finding)
    check(any(e.startswith(str(python)) for e in finding["evidence"]), finding["evidence"])
    check("torch 2.11.0+cu130, torch.version.cuda 13.0" in finding["evidence"], finding["evidence"])


@case
def a_broken_torch_is_not_reported_missing(tmp):
    _, env = venv_with_torch(tmp, "import a_module_torch_needs_but_is_missing\n")
    finding = pytorch_finding(run(["doctor", "--json"], env))
    check("not installed" not in finding["summary"], finding)
    check("a_module_torch_needs_but_is_missing" in finding["summary"], finding)


finish()
