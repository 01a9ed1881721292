"""Run by `cudaenv doctor` as `python3 -c <this file>`: the one question doctor asks an
interpreter. Prints one JSON line: the Python version, its site-packages, and which CUDA the
installed PyTorch was built for. Standard library only.

torch's version and CUDA are read from the text of torch/version.py, which its build writes
(`__version__ = '2.4.1+cu121'`, `cuda = '12.1'`), without importing torch: an import costs seconds
and doctor reads the architectures from torch's own libraries instead. Only an install without a
readable version.py is imported, and then the architectures come from the build's flags."""
import ast
import importlib.util
import json
import os
import platform
import site
import sysconfig

report = {"python": platform.python_version(), "sites": [], "torch": None, "torch_error": None}

paths = sysconfig.get_paths()
report["sites"] = [paths["purelib"], paths["platlib"]]
user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
if user and os.path.isdir(user):
    report["sites"].append(user)


def version_file_values(directory):
    """{"__version__": ..., "cuda": ...} from torch/version.py's literal assignments, or None."""
    try:
        with open(os.path.join(directory, "version.py"), encoding="utf-8") as file:
            tree = ast.parse(file.read(65536))
    except (OSError, SyntaxError, ValueError):
        return None
    values = {}
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and node.value is not None:
            try:
                values[target.id] = ast.literal_eval(node.value)
            except Exception:  # not a literal: not one of the values read here
                pass
    version = values.get("__version__")
    cuda = values.get("cuda")
    if not isinstance(version, str) or not (cuda is None or isinstance(cuda, str)):
        return None
    return {"version": version, "cuda": cuda, "arch_list": []}


def imported_torch():
    """The old way, for an install version.py does not describe: import it."""
    try:
        import torch
    except ModuleNotFoundError as error:
        # Only torch itself missing means "not installed"; a module torch needs is a broken install.
        if error.name != "torch":
            report["torch_error"] = f"{type(error).__name__}: {error}"
        return None
    except Exception as error:  # a broken install must be reported, not crash the probe
        report["torch_error"] = f"{type(error).__name__}: {error}"
        return None
    # torch.cuda.get_arch_list() answers [] when no GPU is usable; the build's own flags do not
    # depend on the driver.
    try:
        arch_flags = torch._C._cuda_getArchFlags()
    except Exception:
        arch_flags = None
    arch_list = arch_flags.split() if arch_flags else []
    if not arch_list:
        try:
            arch_list = list(torch.cuda.get_arch_list())
        except Exception:
            arch_list = []
    try:
        return {"version": str(torch.__version__), "cuda": torch.version.cuda,
                "arch_list": arch_list}
    except Exception as error:  # a directory named torch that is no PyTorch
        report["torch_error"] = f"{type(error).__name__}: {error}"
        return None


try:
    spec = importlib.util.find_spec("torch")  # finds the package without running it
except (ImportError, ValueError):
    spec = None
if spec is not None:
    locations = list(spec.submodule_search_locations or [])
    found = version_file_values(locations[0]) if locations else None
    report["torch"] = found if found is not None else imported_torch()
print(json.dumps(report))
