"""`cudaenv install` and friends against a real local HTTP server serving a synthetic mirror in
NVIDIA's layout."""

import json
import os

from harness import case, check, clean_env, finish, mirror_server, run
from synthetic_mirror import toolkit_release


def env_for(tmp):
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root")


@case
def installs_from_an_http_mirror_and_reinstall_is_a_no_op(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp)
        proc = run(["install", "12.4", "--mirror", url], env, check_exit=0)
        prefix = tmp / "root" / "toolkits" / "12.4.1"
        check("installed CUDA 12.4.1" in proc.stdout, proc.stdout)
        check(os.access(prefix / "bin" / "nvcc", os.X_OK), "nvcc is executable")
        check((prefix / "lib64").is_symlink() and (prefix / "lib64" / "libcudart.so.12").exists(),
              "lib64 leads to lib")
        check(not (prefix / "bin" / "nvidia-smi").exists(), "driver-side components are not installed")
        receipt = json.loads((prefix / "cudaenv-receipt.json").read_text())
        check(sorted(c["name"] for c in receipt["components"]) == ["cuda_cccl", "cuda_cudart", "cuda_nvcc"],
              f"receipt lists the components: {receipt['components']}")
        version = json.loads((prefix / "version.json").read_text())
        check(version["cuda"]["version"] == "12.4.1", "version.json written in NVIDIA's shape")
        again = run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        check("already installed" in again.stdout, again.stdout)
        listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)
        check([t["version"] for t in listed["installed"]] == ["12.4.1"], f"list: {listed['installed']}")
        remote = json.loads(run(["list-remote", "--json", "--mirror", url], env, check_exit=0).stdout)
        check([(v["version"], v["installed"]) for v in remote["versions"]] == [("12.6.3", False), ("12.4.1", True)],
              f"list-remote: {remote}")


finish()
