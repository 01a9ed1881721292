"""`cudaenv why LIBRARY [--for FILE]`: the real pip wheel layout (nvidia-cuda-runtime's
libcudart.so.13 under site-packages/nvidia/cu13/lib, reached through $ORIGIN as torch reaches it)
in a real venv, LD_LIBRARY_PATH taking over, the real ld.so cache, and every answer compared with
what the real dynamic loader (ldd) picks for the same file and environment."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from harness import SKIP, case, check, clean_env, expect_error, finish, mirror_server, run, run_in
from scan_fixtures import make_venv

CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path.home() / ".cache/cudaenv-ci/downloads"))
WHEELS = sorted((CACHE / "wheels").glob("nvidia_cuda_runtime-13.*.whl"))


def real_pick(file, library, env):
    """Where the real loader finds `library` for `file` in `env`."""
    out = subprocess.run(["ldd", str(file)], env=env, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name == library:
            return rest.split(" (")[0]
    return None


def wheel_site(tmp):
    """A venv with the real nvidia-cuda-runtime wheel unpacked into it, and a library in
    site-packages/torch/lib that needs libcudart.so.13 through $ORIGIN/../../nvidia/cu13/lib."""
    python, site = make_venv(tmp / "venv")
    with zipfile.ZipFile(WHEELS[-1]) as wheel:
        wheel.extractall(site)
    version = WHEELS[-1].name.split("-")[1]
    lib = site / "nvidia/cu13/lib"
    (site / "torch/lib").mkdir(parents=True)
    (tmp / "user.c").write_text("int cudaRuntimeGetVersion(int*);\nint v(int* x) { return cudaRuntimeGetVersion(x); }\n")
    user = site / "torch/lib/libtorch_like.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(tmp / "user.c"), f"-L{lib}", "-l:libcudart.so.13",
                    "-Wl,-rpath,$ORIGIN/../../nvidia/cu13/lib", "-Wl,--enable-new-dtags", "-o", str(user)],
                   check=True)
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH=f"{python.parent}:/usr/bin:/bin")
    return site, user, version, env


@case
def pip_wheel_copy_through_origin(tmp):
    if not WHEELS:
        print(f"note: no nvidia_cuda_runtime 13 wheel in {CACHE}/wheels (test_e2e_install.py fetches it); not checked")
        return
    site, user, version, env = wheel_site(tmp)
    report = json.loads(run(["why", "libcudart.so.13", "--for", str(user), "--json"], env, check_exit=0).stdout)
    wheel_copy = str((site / "nvidia/cu13/lib/libcudart.so.13").resolve())
    check(report["loads"]["path"] == wheel_copy, report)
    check(report["loads"]["version"] == version and report["loads"]["version_source"] == "wheel nvidia_cuda_runtime",
          report["loads"])
    check(report["loads"]["origin"] == "pip wheel", report["loads"])
    check(report["search"][-1]["source"] == "DT_RUNPATH of libtorch_like.so", report["search"])
    real = real_pick(user, "libcudart.so.13", env)
    check(real and str(Path(real).resolve()) == wheel_copy, (real, wheel_copy))


@case
def ld_library_path_takes_over_and_mismatch_is_flagged(tmp):
    if not WHEELS:
        print(f"note: no nvidia_cuda_runtime 13 wheel in {CACHE}/wheels; not checked")
        return
    site, user, version, env = wheel_site(tmp)
    other = tmp / "toolkit" / "lib64"
    other.mkdir(parents=True)
    # A second real copy, as a toolkit keeps it: the versioned file and its soname link.
    real = other / "libcudart.so.13.0.48"
    real.write_bytes((site / "nvidia/cu13/lib/libcudart.so.13").read_bytes())
    (other / "libcudart.so.13").symlink_to(real.name)
    env["LD_LIBRARY_PATH"] = str(other)
    env["CUDA_HOME"] = str(tmp / "elsewhere")
    proc = run(["why", "libcudart.so.13", "--for", str(user)], env, check_exit=0)
    check(f"Loads      {real}  version 13.0.48 (from file name)\n" in proc.stdout, proc.stdout)
    check("[LD_LIBRARY_PATH]  found" in proc.stdout, proc.stdout)
    check(f"Also       {(site / 'nvidia/cu13/lib/libcudart.so.13').resolve()}  version {version}  (pip wheel)"
          in proc.stdout, proc.stdout)
    real_copy = real_pick(user, "libcudart.so.13", env)
    check(real_copy and Path(real_copy).resolve() == real.resolve(), ("ldd disagrees", real_copy))
    # The active toolkit is the wheel's directory's neighbour: its copy is not the one loading.
    env["CUDA_HOME"] = str(site / "nvidia/cu13")
    proc = run(["why", "libcudart.so.13", "--for", str(user)], env, check_exit=1)
    check(f"Mismatch   the active toolkit ($CUDA_HOME) has libcudart.so.13 {version}, but 13.0.48 loads"
          in proc.stdout, proc.stdout)
    check(f"fix: scope LD_LIBRARY_PATH: remove {other} from it" in proc.stdout, proc.stdout)


@case
def the_real_ld_cache_answers_for_libc(tmp):
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin")
    report = json.loads(run(["why", "libc.so.6", "--json"], env, check_exit=0).stdout)
    check(report["search"][-1]["source"] == "ld.so cache", report["search"])
    expected = real_pick("/bin/true", "libc.so.6", env)
    check(report["loads"]["path"] == str(Path(expected).resolve()), (report["loads"], expected))


@case
def nothing_found_and_bad_names(tmp):
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin")
    proc = run(["why", "libnot-a-library-anywhere.so.7"], env, check_exit=3)
    check("Loads      nothing: no copy on the search path" in proc.stdout, proc.stdout)
    proc = run(["why", "/usr/lib/libc.so.6"], env)
    expect_error(proc, 2, "LIBRARY /usr/lib/libc.so.6: not a library name")
    check("hint: give a soname such as libcudnn.so.9 (a file that needs it goes in --for FILE)" in proc.stderr,
          proc.stderr)
    (tmp / "script.sh").write_text("#!/bin/sh\n")
    expect_error(run(["why", "libc.so.6", "--for", str(tmp / "script.sh")], env), 1, "script.sh", "not a valid ELF")


def cudnn_like(path, version=None, soname="libcudnn.so.9"):
    """A real shared library named as cuDNN's; with `version` (major, minor, patch) it exports
    it as cuDNN's libraries do: a 4-byte cudnn_graph_version, major << 16 | minor << 8 | patch."""
    source = path.parent / (path.name + ".c")
    if version:
        major, minor, patch = version
        source.write_text(f"const unsigned cudnn_graph_version = {major << 16 | minor << 8 | patch};\n")
    else:
        source.write_text("int cudnnGetVersion(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", str(source), f"-Wl,-soname,{soname}", "-o", str(path)], check=True)
    source.unlink()


def project_pinning_cudnn(tmp):
    """CUDA 12.4.1 and cuDNN 9.1.0 installed from a synthetic mirror, the store's cuDNN made of
    real ELF files (libcudnn.so.9 and the libcudnn_graph.so.9 holding 9.1.0), a project pinning
    both, and a stray libcudnn.so.9.8.0 first on LD_LIBRARY_PATH."""
    from synthetic_mirror import cudnn_release, toolkit_release
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", CUDAENV_ROOT=tmp / "root", PATH="/usr/bin:/bin")
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], env, check_exit=0)
    pinned = tmp / "root/cudnn/9.1.0-cuda12/lib"
    pinned.chmod(0o755)
    (pinned / "libcudnn.so.9").unlink()
    cudnn_like(pinned / "libcudnn.so.9")
    cudnn_like(pinned / "libcudnn_graph.so.9", (9, 1, 0), "libcudnn_graph.so.9")
    stray = tmp / "stray"
    stray.mkdir()
    cudnn_like(stray / "libcudnn.so.9.8.0")
    (stray / "libcudnn.so.9").symlink_to("libcudnn.so.9.8.0")
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12.4"\ncudnn = "9.1"\n')
    env = hooked(env, project)  # the project's activation, as the prompt hook leaves it
    env["LD_LIBRARY_PATH"] = f"{stray}:{env['LD_LIBRARY_PATH']}"  # a later rc line's export
    return env, project, pinned, stray


def hooked(env, directory):
    """`env` after the prompt hook ran in `directory`: activation's variables set."""
    activated = json.loads(run_in(["env", "--shell", "json"], env, directory, expect=0).stdout)
    env = dict(env)
    for name, value in activated.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


@case
def a_stray_cudnn_before_the_pinned_one_is_a_mismatch(tmp):
    env, project, pinned, stray = project_pinning_cudnn(tmp)
    proc = run_in(["why", "libcudnn.so.9"], env, project, expect=1)
    out = proc.stdout
    check(f"Loads      {stray}/libcudnn.so.9.8.0  version 9.8.0 (from file name)\n" in out, out)
    check(f"Also       {pinned}/libcudnn.so.9  version 9.1.0  (cuDNN)\n" in out, out)
    check(f"Mismatch   the pinned cuDNN 9.1 (from {project}/.cudaenv) has libcudnn.so.9 9.1.0, but 9.8.0 loads\n"
          in out, out)
    check(f"fix: scope LD_LIBRARY_PATH: remove {stray} from it" in out, out)
    check(f"; or remove the stray copy {stray}/libcudnn.so.9.8.0; or pin to match it (cudaenv use 12.4 --cudnn 9.8.0)"
          in out, out)
    report = json.loads(run_in(["why", "libcudnn.so.9", "--json"], env, project, expect=1).stdout)
    pinned_copy = next(c for c in report["copies"] if c["path"] == str(pinned / "libcudnn.so.9"))
    check(pinned_copy["version"] == "9.1.0"
          and pinned_copy["version_source"] == "the ELF of libcudnn_graph.so.9 beside it", pinned_copy)
    real = real_pick(stray / "libcudnn.so.9", "libcudnn.so.9", env) or str(stray / "libcudnn.so.9")
    check(Path(real).resolve() == (stray / "libcudnn.so.9.8.0"), ("the real loader picks", real))
    # The pinned copy first: it loads, nothing to flag.
    env["LD_LIBRARY_PATH"] = f"{pinned}:{stray}"
    proc = run_in(["why", "libcudnn.so.9"], env, project, expect=0)
    check(f"Loads      {pinned}/libcudnn.so.9  version 9.1.0 (from the ELF of libcudnn_graph.so.9 beside it)\n"
          in proc.stdout and "Mismatch" not in proc.stdout, proc.stdout)
    # A shell that never ran the hook, with the stray copy exported: what applies here is the
    # project's (its cuDNN loads once activated), and the note says this shell loads the stray.
    plain = {name: value for name, value in env.items()
             if not name.startswith("CUDAENV_") or name == "CUDAENV_ROOT"}
    plain.pop("CUDA_HOME", None)
    plain["PATH"], plain["LD_LIBRARY_PATH"] = "/usr/bin:/bin", str(stray)
    proc = run_in(["why", "libcudnn.so.9"], plain, project, expect=0)
    check(f"Loads      {pinned}/libcudnn.so.9  version 9.1.0" in proc.stdout, proc.stdout)
    check(f"a process started from it now loads {stray}/libcudnn.so.9 instead" in proc.stderr, proc.stderr)


def real_cudnn_directory():
    """A real cuDNN 9 on this machine: the toolkit's lib64 or the one the CI cache installed."""
    for directory in [Path("/usr/local/cuda/lib64"), *sorted((CACHE / "pypi-root/cudnn").glob("9.*/lib"))]:
        if (directory / "libcudnn_graph.so.9").is_file() and (directory / "libcudnn.so.9").is_file():
            return directory
    return None


@case
def real_cudnn_version_read_from_its_elf(tmp):
    directory = real_cudnn_directory()
    if not directory:
        print("note: no real cuDNN 9 here (/usr/local/cuda/lib64 or the CI cache); not checked")
        return
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PATH="/usr/bin:/bin", LD_LIBRARY_PATH=directory)
    graph = json.loads(run(["why", "libcudnn_graph.so.9", "--json"], env, check_exit=0).stdout)["loads"]
    front = json.loads(run(["why", "libcudnn.so.9", "--json"], env, check_exit=0).stdout)["loads"]
    check(graph["version_source"] == "the library's ELF", graph)
    check(front["version_source"] == "the ELF of libcudnn_graph.so.9 beside it", front)
    check(front["version"] == graph["version"] and graph["version"].startswith("9."), (front, graph))
    header = directory.parent / "include/cudnn_version.h"  # the same release's header, beside lib
    if header.is_file():
        defines = dict(line.split()[1:3] for line in header.read_text().splitlines()
                       if line.startswith("#define CUDNN_") and len(line.split()) == 3)
        expected = f"{defines['CUDNN_MAJOR']}.{defines['CUDNN_MINOR']}.{defines['CUDNN_PATCHLEVEL']}"
        check(graph["version"] == expected, (graph, header, expected))


@case
def for_a_package_answers_for_its_library_and_a_plain_answer_notes_the_framework(tmp):
    """torch loads cuDNN through its own DT_RPATH (its wheels' nvidia/cudnn/lib), ahead of
    LD_LIBRARY_PATH: `why --for torch` answers for libtorch_cuda.so, and a plain `why` says that
    torch gets another copy than a plain process."""
    python, site = make_venv(tmp / "venv")
    wheel = site / "nvidia" / "cudnn" / "lib"
    wheel.mkdir(parents=True)
    cudnn_like(wheel / "libcudnn.so.9")
    stray = tmp / "stray"
    stray.mkdir()
    cudnn_like(stray / "libcudnn.so.9")
    torch_lib = site / "torch" / "lib"
    torch_lib.mkdir(parents=True)
    source = tmp / "torch_cuda.c"
    source.write_text("int torch_cuda(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", str(source), "-o", str(torch_lib / "libtorch_cuda.so"),
                    f"-L{wheel}", "-Wl,--no-as-needed", "-l:libcudnn.so.9", "-Wl,--disable-new-dtags",
                    "-Wl,-rpath,$ORIGIN/../../nvidia/cudnn/lib"], check=True)
    env = clean_env(tmp, PATH=f"{python.parent}:/usr/bin:/bin", LD_LIBRARY_PATH=str(stray))
    plain = json.loads(run_in(["why", "libcudnn.so.9", "--json"], env, tmp).stdout)
    check(plain["loads"]["path"] == str(stray / "libcudnn.so.9"), f"a plain process: {plain['loads']}")
    check(any(n.startswith(f"torch loads {wheel}/libcudnn.so.9 (DT_RPATH of libtorch_cuda.so)") and "--for torch" in n
              for n in plain["notes"]), f"the note names torch's copy: {plain['notes']}")
    framework = json.loads(run_in(["why", "libcudnn.so.9", "--for", "torch", "--json"], env, tmp).stdout)
    check(Path(framework["loads"]["path"]).resolve() == (wheel / "libcudnn.so.9").resolve(),
          f"--for torch answers for libtorch_cuda.so: {framework['loads']}")
    expect_error(run_in(["why", "libcudnn.so.9", "--for", "tensorflow"], env, tmp), 3,
                 "--for tensorflow", "no library of that package needs libcudnn.so.9")
    expect_error(run_in(["why", "libcudnn.so.9", "--for", "a b"], env, tmp), 2, "not a file nor a package name")


finish()
