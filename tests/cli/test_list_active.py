"""`cudaenv list` (and `verify`, `doctor`) follow the toolkit that applies in the current directory: the newest installed
match of CUDAENV_VERSION or the nearest .cudaenv, and says so when the selection is not installed."""

import json
import subprocess

from harness import BINARY, case, check, clean_env, finish
from synthetic_mirror import toolkit_release


def list_in(directory, env, *args):
    proc = subprocess.run([BINARY, "list", *args], cwd=directory, env=env, capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"list exits 0: {proc.stderr}")
    return proc.stdout


@case
def the_project_file_decides_which_installed_toolkit_is_active(tmp):
    for release, nvcc in (("12.4.1", "12.4.131"), ("12.6.3", "12.6.85")):
        toolkit_release(tmp / "mirror", release, nvcc)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    for release in ("12.4.1", "12.6.3"):
        subprocess.run([BINARY, "install", release, "--mirror", f"file://{tmp}/mirror"], env=env,
                       capture_output=True, check=True, timeout=60)
    project = tmp / "repo" / "src"
    project.mkdir(parents=True)
    (tmp / "repo" / ".cudaenv").write_text('cuda = "12.4"\n')
    out = list_in(project, env)
    check(f"* 12.4.1  {tmp}/root/toolkits/12.4.1" in out, f"12.4.1 marked active:\n{out}")
    check(f"  12.6.3  {tmp}/root/toolkits/12.6.3" in out, "12.6.3 not marked")
    check(f"active here ({tmp}/repo/.cudaenv)" in out, "names the file that selected it")
    data = json.loads(list_in(project, env, "--json"))
    check(data["active"]["path"] == f"{tmp}/root/toolkits/12.4.1", f"json active: {data['active']}")

    forced = dict(env, CUDAENV_VERSION="12.6")
    check(f"* 12.6.3  {tmp}/root/toolkits/12.6.3" in list_in(project, forced), "CUDAENV_VERSION wins over .cudaenv")

    # verify proves the toolkit that applies here: the .cudaenv's, not the system's.
    proc = subprocess.run([BINARY, "verify", "--json"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=120)
    report = json.loads(proc.stdout)
    check(report["toolkit"]["path"] == f"{tmp}/root/toolkits/12.4.1", f"verify uses the project's toolkit: {report['toolkit']}")
    check(proc.returncode == 7, "the synthetic nvcc cannot build: exit 7")

    # doctor judges the same toolkit.
    doctor = subprocess.run([BINARY, "doctor", "--json"], cwd=project, env=env, capture_output=True, text=True,
                            timeout=120)
    active = json.loads(doctor.stdout)["active_toolkit"]
    check(active["path"] == f"{tmp}/root/toolkits/12.4.1" and active["selected_by"].startswith(f"{tmp}/repo/.cudaenv"),
          f"doctor's active toolkit: {active}")

    (tmp / "repo" / ".cudaenv").write_text("11.8\n")
    out = list_in(project, env)
    check("CUDA 11.8 is selected here" in out and "cudaenv install 11.8" in out, f"not installed:\n{out}")
    check("* " not in out.split("Found on the system")[0], "nothing installed is marked")


finish()
