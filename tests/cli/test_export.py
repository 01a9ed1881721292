"""`cudaenv export dockerfile|apptainer`: a container recipe for the project of the current
directory, from its .cudaenv (and .cudaenv.lock when there is one). The recipe installs the
release bundle through the mirror's get script and the project's exact toolkit from a mirror
given at build time, sets the environment the hook sets, NVIDIA_REQUIRE_CUDA from the family's
minor-version-compatibility floor, the targets' build architectures, and `cudaenv verify` as
the health check / %test. (tests/cli/test_bundle.py runs a generated recipe's install steps in
a minimal Debian root.)"""

import json
import os
import re
import subprocess

from harness import BINARY, case, check, clean_env, expect_error, finish

PROJECT = """cuda = "12.4"
cudnn = "9"
[targets.a100]
driver = "535.104.05"
arch = ["8.0"]
[targets.h100]
driver = "550.54.15"
arch = ["9.0", "8.0"]
"""

LOCK = """lock_version = 1
generated_by = "cudaenv 0.1.0"
[database]
revision = "2026-11-01"
sha256 = "{a}"
[toolkit]
version = "12.1.1"
[[toolkit.components]]
name = "cuda_nvcc"
version = "12.1.105"
relative_path = "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.1.105-archive.tar.xz"
sha256 = "{b}"
size = 42
""".format(a="a" * 64, b="b" * 64)

LOCKED_CUDNN = """[cudnn]
version = "9.1.0"
cuda_variant = "cuda12"
[[cudnn.components]]
name = "cudnn"
version = "9.1.0.70"
relative_path = "cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
sha256 = "{c}"
size = 42
""".format(c="c" * 64)

IMAGE_ROOT = "/opt/cudaenv/data"
BASE_PATH = "/usr/bin:/bin"


def export(tmp, project, *args):
    return subprocess.run([BINARY, "export", *args], cwd=project, env=clean_env(tmp, PWD=project),
                          capture_output=True, text=True, timeout=60)


def project_dir(tmp, text=PROJECT):
    project = tmp / "project"
    (project / "src").mkdir(parents=True)
    (project / ".cudaenv").write_text(text)
    return project


def env_lines(text, prefix):
    return dict(re.findall(rf"^{prefix}(\w+)=\"([^\"]*)\"$", text, re.M))


def hook_environment(tmp, project, recipe_env, **extra):
    """What `cudaenv env` sets in `project` on a machine whose store holds what the recipe's
    image holds (directories at the image's paths below a temporary data root), with PATH as the
    image has it and no LD_LIBRARY_PATH: the paths mapped back to the image's, and the recipe's
    $PATH / ${LD_LIBRARY_PATH:+…} read as those base values."""
    data = tmp / "data"
    for name in ("CUDA_HOME", "LD_LIBRARY_PATH"):
        for entry in recipe_env[name].split("${")[0].split(":"):
            if entry.startswith(IMAGE_ROOT + "/"):
                (data / entry[len(IMAGE_ROOT) + 1:]).mkdir(parents=True, exist_ok=True)
    # The image's toolkit has its compiler (a prefix without bin/nvcc gets no CUDACXX).
    nvcc = data / recipe_env["CUDA_HOME"][len(IMAGE_ROOT) + 1:] / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True, exist_ok=True)
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    path = extra.pop("PATH", f"/opt/cudaenv/bin:{BASE_PATH}")
    proc = subprocess.run([BINARY, "env", "--shell", "json"], cwd=project, capture_output=True, text=True,
                          env=clean_env(tmp, PWD=project, CUDAENV_ROOT=data, PATH=path, **extra), timeout=60)
    check(proc.returncode == 0, f"cudaenv env in the project: {proc.stderr!r}")
    if proc.returncode != 0:
        return {}, {"cudaenv env": "failed"}
    hook = {name: value.replace(str(data), IMAGE_ROOT) for name, value in json.loads(proc.stdout).items()
            if value is not None}
    image = {name: recipe_env[name].replace("$PATH", BASE_PATH).replace("${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}", "")
             for name in hook if name in recipe_env}
    return hook, image


@case
def dockerfile_installs_the_pinned_release_and_sets_what_the_hook_sets(tmp):
    project = project_dir(tmp)
    proc = export(tmp, project / "src", "dockerfile")
    check(proc.returncode == 0, f"export dockerfile succeeds: {proc.stderr!r}")
    text = proc.stdout
    check(re.search(r"^FROM ubuntu:24\.04$", text, re.M) is not None, "an Ubuntu 24.04 base by default")
    check("ARG CUDAENV_MIRROR" in text, "the mirror is a build argument")
    check("COPY .cudaenv ./" in text, "the project file goes into the image")
    check(re.search(r'^RUN curl -fsSL "\$\{CUDAENV_MIRROR\}/cudaenv/get" \| sh -s -- "\$\{CUDAENV_MIRROR\}" /opt/cudaenv$',
                    text, re.M) is not None, f"the bundle comes from the mirror's get script: {text}")
    pinned = re.search(r"^RUN .*/opt/cudaenv/bin/cudaenv install '12\.4\.1' --cudnn '(9\.\d+\.\d+)'$", text, re.M)
    check(pinned is not None, f"the newest 12.4 release the database knows, with an exact cuDNN 9: {text}")
    if pinned is None:
        return
    cudnn_lib = f"/opt/cudaenv/data/cudnn/{pinned.group(1)}-cuda12/lib"
    env = env_lines(text, "ENV ")
    home = "/opt/cudaenv/data/toolkits/12.4.1"
    for name, value in {"CUDA_HOME": home, "CUDA_PATH": home, "CUDAToolkit_ROOT": home,
                        "CUDACXX": f"{home}/bin/nvcc", "CUDAENV_ACTIVE": "12.4.1",
                        "LD_LIBRARY_PATH": f"{home}/lib64:{cudnn_lib}${{LD_LIBRARY_PATH:+:${{LD_LIBRARY_PATH}}}}",
                        "CUDAENV_ROOT": "/opt/cudaenv/data"}.items():
        check(env.get(name) == value, f"ENV {name}={env.get(name)!r}, expected {value!r}")
    # Every variable `cudaenv env` sets in this project, with that store, the recipe sets alike.
    hook, image = hook_environment(tmp, project / "src", env)
    check(image == hook, f"the recipe's environment is the hook's:\n recipe {image}\n hook   {hook}")
    check(set(hook) >= {"CUDA_HOME", "PATH", "LD_LIBRARY_PATH", "CUDACXX"}, f"the hook's variables: {hook}")
    check(env.get("PATH", "").startswith(f"{home}/bin:"), f"the toolkit first on PATH: {env.get('PATH')}")
    check(env.get("NVIDIA_REQUIRE_CUDA") == "cuda>=12.0",
          f"minor-version compatibility: any CUDA 12 driver is accepted: {env.get('NVIDIA_REQUIRE_CUDA')}")
    check(env.get("TORCH_CUDA_ARCH_LIST") == "8.0;9.0", f"the targets' archs: {env.get('TORCH_CUDA_ARCH_LIST')}")
    check(env.get("CMAKE_CUDA_ARCHITECTURES") == "80;90", f"as CMake writes them: {env.get('CMAKE_CUDA_ARCHITECTURES')}")
    check(re.search(r"^HEALTHCHECK CMD /opt/cudaenv/bin/cudaenv verify", text, re.M) is not None, "verify is the health check")
    # The image has the compiler verify builds with, and the build checks what needs no GPU.
    check(re.search(r"^RUN command -v g\+\+ >/dev/null \|\| \{ apt-get update && apt-get install -y "
                    r"--no-install-recommends g\+\+ ", text, re.M) is not None, f"g++ is installed: {text}")
    runs = re.findall(r"^RUN (.*)$", text, re.M)
    check(runs and runs[-1].endswith("/opt/cudaenv/bin/cudaenv verify --build-only --only-arch '8.0' --only-arch '9.0'"),
          f"the last step builds for the targets' architectures, without a GPU: {runs}")


@case
def apptainer_definition_has_the_same_steps_and_verify_as_its_test(tmp):
    project = project_dir(tmp)
    out = tmp / "cudaenv.def"
    proc = export(tmp, project, "apptainer", "--base", "nvidia/cuda:12.4.1-base-ubuntu22.04", "-o", str(out))
    check(proc.returncode == 0 and proc.stdout == "", f"written to the file: {proc.stderr!r}")
    text = out.read_text()
    check("Bootstrap: docker\nFrom: nvidia/cuda:12.4.1-base-ubuntu22.04\n" in text, "the base image chosen")
    check("\n%files\n    .cudaenv /project/.cudaenv\n" in text, "the project file is copied in")
    check('curl -fsSL "{{ CUDAENV_MIRROR }}/cudaenv/get"' in text, "the mirror is a build argument")
    check(re.search(r"cudaenv install '12\.4\.1' --cudnn '9\.\d+\.\d+'$", text, re.M) is not None,
          "the pinned release")
    env = env_lines(text, "    export ")
    check(env.get("NVIDIA_REQUIRE_CUDA") == "cuda>=12.0" and env.get("CMAKE_CUDA_ARCHITECTURES") == "80;90",
          f"the same environment: {env}")
    docker = env_lines(export(tmp, project, "dockerfile").stdout, "ENV ")
    check(env == docker, f"the same environment as the Dockerfile's:\n{env}\n{docker}")
    # %test runs at the end of every build: the GPU run where there is a GPU, else the build check.
    check(text.rstrip().endswith("%test\n    if nvidia-smi -L >/dev/null 2>&1; then /opt/cudaenv/bin/cudaenv verify; "
                                 "else /opt/cudaenv/bin/cudaenv verify --build-only --only-arch '8.0' --only-arch '9.0'; fi"),
          f"%test: {text[text.find('%test'):]!r}")
    test = text[text.find("%test") + len("%test"):].strip()
    for gpu, expected in ((True, "verify"), (False, "verify --build-only --only-arch 8.0 --only-arch 9.0")):
        probe = tmp / ("with-gpu" if gpu else "without-gpu")
        probe.mkdir()
        (probe / "nvidia-smi").write_text("#!/bin/sh\nexit %d\n" % (0 if gpu else 9))
        (probe / "cudaenv").write_text('#!/bin/sh\necho "ran: $*"\n')
        for name in ("nvidia-smi", "cudaenv"):
            (probe / name).chmod(0o755)
        ran = subprocess.run(["sh", "-c", test.replace("/opt/cudaenv/bin/cudaenv", str(probe / "cudaenv"))],
                             env={"PATH": f"{probe}:/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
        check(ran.stdout == f"ran: {expected}\n", f"%test with GPU={gpu}: {ran.stdout!r} {ran.stderr!r}")


@case
def a_lock_file_decides_the_toolkit_and_sync_frozen_installs_it(tmp):
    project = project_dir(tmp, 'cuda = "12"\n')
    (project / ".cudaenv.lock").write_text(LOCK)
    proc = export(tmp, project, "dockerfile")
    check(proc.returncode == 0, f"export succeeds: {proc.stderr!r}")
    check("COPY .cudaenv .cudaenv.lock ./" in proc.stdout, "the lock goes into the image")
    check(re.search(r"^RUN .*/opt/cudaenv/bin/cudaenv sync --frozen$", proc.stdout, re.M) is not None,
          "the locked set is installed with sync --frozen")
    check(env_lines(proc.stdout, "ENV ").get("CUDA_HOME") == "/opt/cudaenv/data/toolkits/12.1.1",
          "the locked release, not the newest 12.x")
    check("# No [targets] in .cudaenv" in proc.stdout and "ENV TORCH_CUDA_ARCH_LIST" not in proc.stdout
          and "ENV CMAKE_CUDA_ARCHITECTURES" not in proc.stdout,
          "without targets no architectures are set, and the recipe says so")


@case
def a_locked_cudnn_is_on_the_images_library_path_as_the_hook_puts_it(tmp):
    project = project_dir(tmp, 'cuda = "12"\ncudnn = "9"\n')
    (project / ".cudaenv.lock").write_text(LOCK + LOCKED_CUDNN)
    proc = export(tmp, project, "dockerfile")
    check(proc.returncode == 0, f"export succeeds: {proc.stderr!r}")
    env = env_lines(proc.stdout, "ENV ")
    check(env.get("LD_LIBRARY_PATH", "").startswith(
        "/opt/cudaenv/data/toolkits/12.1.1/lib64:/opt/cudaenv/data/cudnn/9.1.0-cuda12/lib"),
        f"the locked cuDNN's lib directory after the toolkit's: {env.get('LD_LIBRARY_PATH')}")
    hook, image = hook_environment(tmp, project, env)
    check(image == hook, f"the recipe's environment is the hook's:\n recipe {image}\n hook   {hook}")


@case
def a_toolkit_that_refuses_the_images_gcc_gets_an_older_one_as_the_hook_would_set_it(tmp):
    # CUDA 11.8 accepts GCC 11 at most; the image's c++ is Ubuntu 24.04's g++ 13.
    project = project_dir(tmp, 'cuda = "11.8"\n')
    proc = export(tmp, project, "dockerfile")
    check(proc.returncode == 0, f"export succeeds: {proc.stderr!r}")
    check(re.search(r"^RUN command -v g\+\+-11 >/dev/null \|\| \{ apt-get update && apt-get install -y "
                    r"--no-install-recommends g\+\+-11 ", proc.stdout, re.M) is not None,
          f"the image gets g++-11: {proc.stdout}")
    env = env_lines(proc.stdout, "ENV ")
    check(env.get("CUDAHOSTCXX") == "/usr/bin/g++-11" and env.get("NVCC_PREPEND_FLAGS") == "-ccbin /usr/bin/g++-11",
          f"nvcc and CMake use it: {env}")
    # The hook on a machine laid out as the image: c++ is g++-13, g++-11 is there too, and the
    # toolkit's host_config.h refuses GCC above 11.
    usr_bin = tmp / "usr-bin"
    usr_bin.mkdir()
    for name in ("g++-13", "g++-11"):
        (usr_bin / name).write_text("#!/bin/sh\n")
        (usr_bin / name).chmod(0o755)
    os.symlink("g++-13", usr_bin / "c++")
    crt = tmp / "data/toolkits/11.8.0/include/crt"
    crt.mkdir(parents=True)
    (crt / "host_config.h").write_text("#if __GNUC__ > 11\n#error unsupported GNU version\n#endif\n")
    hook, image = hook_environment(tmp, project, env, PATH=f"/opt/cudaenv/bin:{usr_bin}:{BASE_PATH}")
    # The compilers lie in /usr/bin in the image, in usr-bin here.
    for name in ("CUDAHOSTCXX", "NVCC_PREPEND_FLAGS"):
        hook[name] = hook.get(name, "").replace(str(usr_bin), "/usr/bin")
    image["PATH"] = image["PATH"].replace(BASE_PATH, f"{usr_bin}:{BASE_PATH}")
    check(image == hook, f"the recipe's environment is the hook's:\n recipe {image}\n hook   {hook}")


@case
def the_recipes_cudnn_is_the_projects_own_resolution(tmp):
    """torch 2.5's wheels are built against cuDNN 9.1: `cudaenv resolve` with the project's pins
    picks 9.1.0, and so must the recipe (not the database's newest 9.x)."""
    project = project_dir(tmp, 'cuda = "12.4"\ncudnn = "9"\n[frameworks]\ntorch = "2.5"\n')
    resolved = subprocess.run([BINARY, "resolve", "--no-detect", "--json"], cwd=project,
                              env=clean_env(tmp, PWD=project), capture_output=True, text=True, timeout=60)
    wanted = json.loads(resolved.stdout)["cudnn"]["version"]
    proc = export(tmp, project, "dockerfile")
    check(proc.returncode == 0, f"export: {proc.stderr}")
    chosen = re.search(r"cudaenv install '12\.4\.1' --cudnn '([0-9.]+)'", proc.stdout)
    check(chosen is not None and chosen.group(1) == wanted,
          f"the recipe's cuDNN {chosen and chosen.group(1)} is resolve's {wanted}")


@case
def bad_input_is_refused_with_the_fix(tmp):
    empty = tmp / "nowhere"
    empty.mkdir()
    expect_error(export(tmp, empty, "dockerfile"), 2, "no .cudaenv")
    project = project_dir(tmp, 'cuda = "10.0"\n')
    expect_error(export(tmp, project, "dockerfile"), 3, ".cudaenv", "10.0")
    project2 = tmp / "p2"
    project2.mkdir()
    (project2 / ".cudaenv").write_text('cuda = "12.4"\n')
    (project2 / ".cudaenv.lock").write_text("lock_version = 9\n")
    expect_error(export(tmp, project2, "dockerfile"), 1, ".cudaenv.lock")
    bad_base = export(tmp, project2, "dockerfile", "--base", "ubuntu\nRUN touch /pwned")
    check(bad_base.returncode == 2 and "--base" in bad_base.stderr, f"a base image name with a newline: {bad_base.stderr!r}")


finish()
