"""Run by `cudaenv doctor` as `python3 -c <this file>`: prints one JSON line saying which CUDA the
installed PyTorch was built for and which GPU architectures it carries. Standard library only;
importing the framework is its one side effect, and it never initialises CUDA."""
import json
import platform

report = {"python": platform.python_version(), "torch": None, "torch_error": None}
try:
    import torch
except ModuleNotFoundError as error:
    # Only torch itself missing means "not installed"; a module torch needs is a broken install.
    if error.name != "torch":
        report["torch_error"] = f"{type(error).__name__}: {error}"
except Exception as error:  # a broken install must be reported, not crash the probe
    report["torch_error"] = f"{type(error).__name__}: {error}"
else:
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
    report["torch"] = {
        "version": str(torch.__version__),
        "cuda": torch.version.cuda,
        "arch_list": arch_list,
    }
print(json.dumps(report))
