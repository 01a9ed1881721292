"""The release bundle (scripts/package) where cudaenv's build dependencies are absent: unpacked
inside a minimal Debian 12 root (debootstrap --variant=minbase: no libcurl, no libarchive, no
compiler), it must report its version, describe the machine, install a toolkit from a loopback
mirror, pin it with `use` and activate it through the bash hook. And no file in it may need a
glibc symbol version newer than 2.34, so it also starts on Ubuntu 22.04 (glibc 2.35). The
recipes `cudaenv export` writes run there too: a Dockerfile's RUN steps (install of the pin), and
an Apptainer definition's %post with a lock (sync --frozen, toolkit and cuDNN), whose
%environment then agrees with what cudaenv computes inside the image.

CUDAENV_BUNDLE names the tarball; scripts/test builds it (scripts/package) and runs this file
with it set. Without it, the test is skipped."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import shutil

import minbase_root
import repack
from framework_wheels import framework_index, torch_wheel
from harness import BINARY, case, check, clean_env, finish, mirror_server
from synthetic_mirror import cudnn_release, toolkit_release

BUNDLE = os.environ.get("CUDAENV_BUNDLE", "")
CACHE = Path(os.environ.get("CUDAENV_TEST_CACHE", Path(__file__).parent / ".cache"))
GLIBC_CEILING = (2, 34)

if not BUNDLE:
    print("skipped: CUDAENV_BUNDLE is not set (scripts/test builds the bundle and sets it)")
    sys.exit(minbase_root.SKIP)
minbase_root.skip_unless_possible()


def required_glibc_versions(path):
    """The GLIBC_x.y versions an ELF file's "Version References" name (what the loader checks)."""
    dump = subprocess.run(["objdump", "-p", str(path)], capture_output=True, text=True, check=True).stdout
    references = dump.split("Version References:", 1)[1] if "Version References:" in dump else ""
    return {tuple(int(n) for n in m) for m in re.findall(r"\bGLIBC_(\d+)\.(\d+)", references)}


def elf_files(top):
    for path in sorted(Path(top).rglob("*")):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield path


@case
def no_file_in_the_bundle_needs_a_glibc_newer_than_2_34(tmp):
    # tar(1), not tarfile: Python 3.11.2 (Debian 12's) has no extraction filters
    subprocess.run(["tar", "-xzf", str(BUNDLE), "-C", str(tmp)], check=True, timeout=120)
    (top,) = list(tmp.iterdir())
    checked = {}
    for path in elf_files(top):
        versions = required_glibc_versions(path)
        checked[str(path.relative_to(top))] = max(versions) if versions else None
    too_new = {name: v for name, v in checked.items() if v and v > GLIBC_CEILING}
    check(not too_new, f"files needing a glibc above 2.34: {too_new}")
    # The check looked at what matters: the dynamic full program and the libraries it carries.
    check(checked.get("libexec/cudaenv/cudaenv-full"), f"cudaenv-full was checked: {sorted(checked)}")
    carried = [name for name in checked if name.startswith("lib/cudaenv/")]
    check(any("libcurl.so" in name for name in carried), f"libcurl travels in the bundle: {carried}")
    for program in ("bin/cudaenv", "libexec/cudaenv/cudaenv-shim"):
        check(program in checked, f"{program} is in the bundle: {sorted(checked)}")
    for doc in ("share/doc/cudaenv/LICENSE", "share/doc/cudaenv/THIRD_PARTY_NOTICES",
                "share/man/man1/cudaenv.1", "share/bash-completion/completions/cudaenv"):
        check((top / doc).is_file(), f"{doc} is in the bundle")
    notices = list((top / "share/doc/cudaenv/third-party").glob("*.copyright"))
    check(any(n.name.startswith("libcurl") for n in notices), f"libcurl's copyright file ships: {notices}")


def in_root(root, script, **extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", **extra}
    proc = minbase_root.run(root, script, env)
    print(f"--- in the root: {script}\n{proc.stdout}{proc.stderr}", end="")
    return proc


@case
def the_unpacked_bundle_works_in_a_minimal_debian_root(tmp):
    root = minbase_root.unpack(tmp / "root")
    lib = root / "usr/lib/x86_64-linux-gnu"
    check(not list(lib.glob("libcurl.so*")) and not list(lib.glob("libarchive.so*")),
          "the minbase root has neither libcurl nor libarchive")
    (root / "tmp/cudaenv.tar.gz").write_bytes(Path(BUNDLE).read_bytes())
    unpacked = in_root(root, "mkdir -p /opt/cudaenv && tar -C /opt/cudaenv --strip-components=1 "
                             "-xzf /tmp/cudaenv.tar.gz && ln -s /opt/cudaenv/bin/cudaenv /usr/local/bin/cudaenv")
    check(unpacked.returncode == 0, "the bundle unpacks with the root's own tar")
    # Called through a symlink on PATH, from another directory: it finds its companions itself.
    path = "/usr/local/bin:/usr/bin:/bin"
    version = in_root(root, "cd / && cudaenv --version", PATH=path)
    check(version.returncode == 0 and re.fullmatch(r"cudaenv \d+\.\d+\.\d+\S*\n", version.stdout),
          f"--version: {version.stdout!r} {version.stderr!r}")
    info = in_root(root, "cd /tmp && cudaenv info", PATH=path)
    check(info.returncode == 0 and "Debian GNU/Linux 12" in info.stdout, f"info describes the root")
    check("error" not in info.stderr, f"info reports no error: {info.stderr!r}")

    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, _):
        install = in_root(root, f"cudaenv install 12.4 --mirror {url}", PATH=path)
    check(install.returncode == 0, "install from the loopback mirror succeeds")
    check((root / "root/.local/share/cudaenv/toolkits/12.4.1/bin/nvcc").is_file(),
          "the toolkit is in the root's data directory")

    use = in_root(root, "mkdir -p /root/project && cd /root/project && cudaenv use 12.4", PATH=path)
    check(use.returncode == 0 and (root / "root/project/.cudaenv").is_file(), "use pins the project")
    # The hook as a user sets it up: an interactive bash whose rc file evaluates `cudaenv init`.
    (root / "root/.bashrc").write_text('eval "$(cudaenv init bash)"\n')
    (root / "root/session").write_text('cd /root/project\necho "active=$CUDAENV_ACTIVE"\nnvcc --version\nexit\n')
    hook = minbase_root.run(root, "bash -i < /root/session 2>&1",
                            {"PATH": path, "HOME": "/root", "LANG": "C.UTF-8", "TERM": "dumb"})
    print(f"--- bash hook:\n{hook.stdout}{hook.stderr}", end="")
    check("active=12.4.1" in hook.stdout, "the bash hook activates the pinned toolkit at the prompt")
    check("V12.4.131" in hook.stdout, "nvcc on PATH is the pinned toolkit's")



def real_toolkit_mirror(tmp):
    """A mirror holding this machine's own toolkit (packed as NVIDIA packs its redist archives,
    cached as test_e2e_install caches it): the recipes' build check compiles with it. Returns the
    release and nvcc's version, or None where the machine has no nvcc to pack."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    match = re.search(r"release ([0-9]+\.[0-9]+), V([0-9.]+)", out)
    if not match:
        return None
    release, version = match.group(1) + ".0", match.group(2)
    cached = CACHE / f"system-toolkit-mirror-{version}"
    if not (cached / "cuda" / "redist" / f"redistrib_{release}.json").exists():
        shutil.rmtree(cached, ignore_errors=True)
        if not repack.pack_system_toolkit(repack.toolkit_prefix_of(nvcc), str(cached), release, version):
            return None
    # Hard links: `mirror create --with-cudaenv` adds the bundle here, never to the cache.
    subprocess.run(["cp", "-al", str(cached), str(tmp / "mirror")], check=True, timeout=120)
    return release, version


def mirror_with_bundle(tmp, env):
    made = subprocess.run([BINARY, "mirror", "create", str(tmp / "mirror"), "--with-cudaenv", BUNDLE],
                          env=env, capture_output=True, text=True, timeout=120)
    check(made.returncode == 0, f"mirror create --with-cudaenv: {made.stderr!r}")


# An image with curl, the compiler and Python's venv, as ubuntu:24.04 is after the recipe's
# package steps (their guards skip apt-get, which a root without the network cannot run).
IMAGE_PACKAGES = ("curl", "g++", "python3-venv")


@case
def a_generated_dockerfiles_steps_run_in_a_minimal_root_and_its_build_check_passes(tmp):
    real = real_toolkit_mirror(tmp)
    if real is None:
        print("skip part: no nvcc here to pack a real toolkit")
        return
    release, version = real
    # The recipe as `cudaenv export dockerfile` writes it for a project with targets.
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text(f'cuda = "{release}"\n[targets.h100]\ndriver = "580"\narch = ["9.0"]\n')
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "data", PWD=project)
    recipe = subprocess.run([BINARY, "export", "dockerfile"], cwd=project, env=env,
                            capture_output=True, text=True, timeout=60)
    check(recipe.returncode == 0, f"export dockerfile: {recipe.stderr!r}")
    runs = re.findall(r"^RUN (.*)$", recipe.stdout, re.M)
    envs = re.findall(r'^ENV (\w+)="([^"]*)"$', recipe.stdout, re.M)
    check(len(runs) == 5 and envs, f"install steps, the build check and the environment: {recipe.stdout}")
    mirror_with_bundle(tmp, env)
    root = minbase_root.unpack(tmp / "root", packages=IMAGE_PACKAGES)
    (root / "project").mkdir()
    (root / "project/.cudaenv").write_text((project / ".cudaenv").read_text())  # COPY .cudaenv ./
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    with mirror_server(tmp / "mirror") as (url, _):
        for line in runs:
            step = minbase_root.run(root, f"cd /project && {line}", {**base, "CUDAENV_MIRROR": url})
            print(f"--- RUN {line}\n{step.stdout}{step.stderr}", end="")
            check(step.returncode == 0, f"RUN {line} succeeds in the root")
    check("builds GPU code for sm_90" in step.stdout, f"the build check compiled for the target: {step.stdout}")
    image_env = dict(base)
    for name, value in envs:
        image_env[name] = value.replace("$PATH", image_env["PATH"])
    used = minbase_root.run(root, 'cd / && echo "CUDA_HOME=$CUDA_HOME" && nvcc --version && '
                                  'cudaenv current', image_env)
    print(f"--- in the image's environment\n{used.stdout}{used.stderr}", end="")
    check(f"V{version}" in used.stdout, "nvcc on the image's PATH is the recipe's toolkit")
    check(used.returncode == 0 and release in used.stdout, "cudaenv in the image sees the toolkit")
    check(image_env.get("CMAKE_CUDA_ARCHITECTURES") == "90", f"the target's arch: {image_env}")


def section(text, name):
    """The lines of an Apptainer definition's %name section, without their indentation."""
    body = re.search(rf"^%{name}\n(.*?)(?=^%|\Z)", text, re.M | re.S)
    return [line[4:] for line in (body.group(1).splitlines() if body else []) if line.strip()]


@case
def a_generated_apptainer_definitions_post_with_a_lock_runs_in_a_minimal_root(tmp):
    real = real_toolkit_mirror(tmp)
    if real is None:
        print("skip part: no nvcc here to pack a real toolkit")
        return
    release, version = real
    major = release.split(".")[0]
    cudnn_release(tmp / "mirror", "9.13.0", "9.13.0.50", variants=(major,))
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text(f'cuda = "{release}"\ncudnn = "9.13"\n'
                                      '[targets.h100]\ndriver = "580"\narch = ["9.0"]\n')
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "data", PWD=project)
    mirror_with_bundle(tmp, env)
    root = minbase_root.unpack(tmp / "root", packages=IMAGE_PACKAGES)
    with mirror_server(tmp / "mirror") as (url, _):
        locked = subprocess.run([BINARY, "lock", "--mirror", url], cwd=project, env=env,
                                capture_output=True, text=True, timeout=120)
        check(locked.returncode == 0, f"cudaenv lock against the mirror: {locked.stderr!r}")
        recipe = subprocess.run([BINARY, "export", "apptainer"], cwd=project, env=env,
                                capture_output=True, text=True, timeout=60)
        check(recipe.returncode == 0, f"export apptainer: {recipe.stderr!r}")
        post = section(recipe.stdout, "post")
        check(any(line.endswith("cudaenv sync --frozen") for line in post), f"the lock's set is installed: {post}")
        docker = subprocess.run([BINARY, "export", "dockerfile"], cwd=project, env=env,
                                capture_output=True, text=True, timeout=60).stdout
        runs = [line.replace("${CUDAENV_MIRROR}", "{{ CUDAENV_MIRROR }}") for line in re.findall(r"^RUN (.*)$", docker, re.M)]
        check(runs == post[1:], f"the Dockerfile's RUN steps are the same steps:\n{runs}\n{post}")
        # %files, then %post as apptainer runs it: /bin/sh, the build argument substituted.
        (root / "project").mkdir()
        for name in (".cudaenv", ".cudaenv.lock"):
            (root / "project" / name).write_text((project / name).read_text())
        script = "\n".join(post).replace("{{ CUDAENV_MIRROR }}", url)
        base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
        built = minbase_root.run(root, script, base)
        print(f"--- %post\n{built.stdout}{built.stderr}", end="")
        check(built.returncode == 0, "%post succeeds in the root")
    check((root / f"opt/cudaenv/data/cudnn/9.13.0-cuda{major}/lib").is_dir(), "the locked cuDNN is installed")
    check("builds GPU code for sm_90" in built.stdout, f"%post's build check compiled for the target: {built.stdout}")
    # %environment, sourced as apptainer does; then cudaenv itself, in the image, agrees with it.
    exports = "\n".join(section(recipe.stdout, "environment"))
    used = minbase_root.run(root, f"{exports}\ncd /project && nvcc --version && echo \"LD=$LD_LIBRARY_PATH\" && "
                                  "env > /tmp/image.env && cudaenv env --shell json", base)
    print(f"--- in the image's environment\n{used.stdout}{used.stderr}", end="")
    check(used.returncode == 0 and f"V{version}" in used.stdout, "nvcc on the image's PATH is the locked toolkit's")
    ld = re.search(r"^LD=(.*)$", used.stdout, re.M)
    check(ld is not None and ld.group(1) == f"/opt/cudaenv/data/toolkits/{release}/lib64:"
                                            f"/opt/cudaenv/data/cudnn/9.13.0-cuda{major}/lib",
          f"the toolkit's and the cuDNN's libraries, no empty entry: {ld and ld.group(1)!r}")
    computed = json.loads(used.stdout[used.stdout.index("{"):]) if "{" in used.stdout else {}
    names = re.findall(r'^export (\w+)=', exports, re.M)
    image_env = dict(line.split("=", 1) for line in (root / "tmp/image.env").read_text().splitlines() if "=" in line)
    exported = {name: image_env.get(name) for name in names}
    differing = {name: (value, computed.get(name)) for name, value in exported.items()
                 if name in computed and computed[name] is not None and name != "PATH" and value != computed[name]}
    check(computed and not differing and computed.get("CUDA_HOME") == exported.get("CUDA_HOME"),
          f"cudaenv env in the image sets what %environment set: {differing or computed}")


@case
def a_recipe_of_a_lock_with_torch_installs_it_in_a_venv_and_proves_the_import_at_build_time(tmp):
    real = real_toolkit_mirror(tmp)
    if real is None:
        print("skip part: no nvcc here to pack a real toolkit")
        return
    release, _ = real
    cuda = ".".join(release.split(".")[:2])
    tag = "cu" + cuda.replace(".", "")
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text(f'cuda = "{cuda}"\n[frameworks]\ntorch = "2.11"\n'
                                      '[targets.h100]\ndriver = "580"\narch = ["9.0"]\n')
    # torch 2.11's build for this CUDA, as PyTorch's per-build index lists it, reporting the
    # cuDNN its wheels bring (9.19.0 for cu130).
    torch_wheel(tmp / "wheels", f"2.11.0+{tag}", cuda=cuda, cudnn=91900)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "data", PWD=project)
    mirror_with_bundle(tmp, env)
    root = minbase_root.unpack(tmp / "root", packages=IMAGE_PACKAGES)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        indexes = {"CUDAENV_FRAMEWORK_INDEX": f"{index}/whl", "PIP_INDEX_URL": f"{index}/simple"}
        locked = subprocess.run([BINARY, "lock", "--mirror", url], cwd=project, env={**env, **indexes},
                                capture_output=True, text=True, timeout=120)
        check(locked.returncode == 0, f"cudaenv lock: {locked.stdout!r} {locked.stderr!r}")
        recipe = subprocess.run([BINARY, "export", "apptainer"], cwd=project, env=env,
                                capture_output=True, text=True, timeout=60)
        check(recipe.returncode == 0, f"export apptainer: {recipe.stderr!r}")
        post = section(recipe.stdout, "post")
        check("python3 -m venv '/opt/venv'" in post and
              any("&& VIRTUAL_ENV='/opt/venv' CUDAENV_MIRROR=" in line and line.endswith("sync --frozen") for line in post),
              f"a virtualenv, then the lock synced into it: {post}")
        check("verify --torch" in "\n".join(section(recipe.stdout, "test")), "the GPU check runs torch's too")
        (root / "project").mkdir()
        for name in (".cudaenv", ".cudaenv.lock"):
            (root / "project" / name).write_text((project / name).read_text())
        script = "\n".join(post).replace("{{ CUDAENV_MIRROR }}", url)
        base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
                "LANG": "C.UTF-8", **indexes}
        built = minbase_root.run(root, script, base)
        print(f"--- %post\n{built.stdout}{built.stderr}", end="")
        check(built.returncode == 0, "%post succeeds in the root")
    check(f"torch 2.11.0+{tag} imports in /opt/venv: CUDA {cuda}, cuDNN 9.19.0, as locked" in built.stdout,
          f"the build proves the locked torch imports: {built.stdout}")
    exports = "\n".join(section(recipe.stdout, "environment"))
    used = minbase_root.run(root, f"{exports}\ncd /project && python3 -c 'import torch; print(torch.__version__)'",
                            {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"})
    check(used.returncode == 0 and f"2.11.0+{tag}" in used.stdout,
          f"the image's python3 is the virtualenv's, with torch: {used.stdout!r} {used.stderr!r}")


finish()
