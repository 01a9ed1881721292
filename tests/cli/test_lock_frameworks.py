"""Exact framework versions in .cudaenv.lock: `cudaenv lock` asks the build's package index (here
a loopback stand-in for https://download.pytorch.org/whl, through CUDAENV_FRAMEWORK_INDEX or the
config's framework_index) for the newest wheel of the requirement with the build's local tag and
a Linux x86-64 wheel, and pins it with an exact pip line; an index it cannot read exits 5, one
without such a wheel exits 3, and neither writes a lock. `lock --check` asks no index: a newer
release upstream leaves the lock current, a lock of the older series-only form is stale."""

import hashlib
import tomllib

from framework_wheels import framework_index, framework_wheel
from harness import case, check, clean_env, expect_error, finish, global_config, mirror_server, run_in
from synthetic_mirror import cudnn_release, toolkit_release

PROJECT = """cuda = "12.4"
[frameworks]
torch = "2.5"
[targets.h100]
driver = "550.54.15"
arch = ["9.0"]
"""

# What the index offers besides the two 2.5.x cu124 builds: a newer build for another CUDA, a
# newer series, a newer cu124 release with only a Windows wheel, a release candidate.
OTHERS = [("2.5.3+cu121", "linux_x86_64"), ("2.6.0+cu124", "manylinux_2_28_x86_64"),
          ("2.5.2+cu124", "win_amd64"), ("2.5.9rc1+cu124", "linux_x86_64")]

PIP_2_5_1 = "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124"


def setup(tmp, offered=(("2.5.0+cu124", "linux_x86_64"), ("2.5.1+cu124", "linux_x86_64"),
                        ("2.5.1+cu124", "manylinux_2_28_x86_64"), *OTHERS)):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")  # the one torch 2.5 cu124 bundles
    for version, platform in offered:
        framework_wheel(tmp / "wheels", "torch", version, platform)
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(PROJECT)
    (tmp / "sysroot").mkdir()
    return project


def env_for(tmp, mirror, index, **extra):
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_MIRROR=mirror,
                     PWD=tmp / "repo", CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2,
                     CUDAENV_FRAMEWORK_INDEX=f"{index}/whl", **extra)


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def locked_torch(project):
    path = project / ".cudaenv.lock"
    return tomllib.loads(path.read_text())["frameworks"]["torch"] if path.exists() else {}


@case
def lock_pins_the_newest_cu124_release_of_the_series_with_an_exact_pip_line(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, control):
        proc = run_in(["lock"], env_for(tmp, url, index), project, expect=0)
        check("torch 2.5.1+cu124" in proc.stdout, proc.stdout)
        torch = locked_torch(project)
        check(torch["version"] == "2.5.1+cu124", f"newest 2.5.x +cu124 with a Linux wheel: {torch}")
        check(torch["pip"] == PIP_2_5_1, torch["pip"])
        check(torch["index_url"] == "https://download.pytorch.org/whl/cu124", "the upstream index is recorded")
        wheels = {w["filename"]: w["sha256"] for w in torch.get("wheels", [])}
        expected = {p.name: sha256(p) for p in (tmp / "wheels").glob("torch-2.5.1+cu124-*.whl")}
        check(wheels == expected and len(wheels) == 2, f"both Linux wheels with the index's sha256: {wheels}")
        log_file = control.parent / "control.json.log"
        log = log_file.read_text() if log_file.exists() else ""
        check("GET /whl/cu124/torch/" in log, f"read through CUDAENV_FRAMEWORK_INDEX: {log}")


@case
def the_check_asks_no_index_and_a_newer_release_upstream_leaves_the_lock_current(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        with framework_index(tmp / "wheels") as (index, _):
            # The config's framework_index, with the variable unset, points at the mirror too.
            env = env_for(tmp, url, index)
            del env["CUDAENV_FRAMEWORK_INDEX"]
            global_config(env, f'framework_index = "{index}/whl"\n')
            run_in(["lock"], env, project, expect=0)
        check(locked_torch(project)["version"] == "2.5.1+cu124", str(locked_torch(project)))
        framework_wheel(tmp / "wheels", "torch", "2.5.2+cu124", "linux_x86_64")
        # The index is down now: --check does not need it, and 2.5.2 does not make the lock stale.
        proc = run_in(["lock", "--check"], env, project, expect=0)
        check("is current" in proc.stdout and "torch 2.5.1+cu124" in proc.stdout, proc.stdout)
        with framework_index(tmp / "wheels") as (index, _):
            global_config(env, f'framework_index = "{index}/whl"\n')
            run_in(["lock"], env, project, expect=0)
        check(locked_torch(project)["version"] == "2.5.2+cu124", "locking again takes the newer release")
        # sync (what an exported container recipe runs, --frozen) prints the exact line.
        proc = run_in(["sync", "--frozen"], env, project, expect=0)
        check("torch 2.5.2+cu124 (install it in your Python environment): pip install torch==2.5.2+cu124 "
              "--index-url https://download.pytorch.org/whl/cu124" in proc.stdout, proc.stdout)
        proc = run_in(["export", "dockerfile"], env, project, expect=0)
        check("COPY .cudaenv .cudaenv.lock ./" in proc.stdout, proc.stdout)


@case
def an_index_that_cannot_be_reached_exits_5_and_writes_no_lock(tmp):
    project = setup(tmp)
    with framework_index(tmp / "wheels") as (index, _):
        pass  # its port is closed now
    with mirror_server(tmp / "mirror") as (url, _):
        proc = run_in(["lock"], env_for(tmp, url, index), project)
        expect_error(proc, 5, "torch: cannot read the index", f"{index}/whl/cu124", "CUDAENV_FRAMEWORK_INDEX")
        check("hint: point CUDAENV_FRAMEWORK_INDEX (or framework_index in the config) at a mirror of "
              "https://download.pytorch.org/whl" in proc.stderr, proc.stderr)
        check(not (project / ".cudaenv.lock").exists(), "no lock written")


@case
def an_index_without_a_matching_wheel_exits_3_naming_what_it_has(tmp):
    project = setup(tmp, offered=OTHERS)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        proc = run_in(["lock"], env_for(tmp, url, index), project)
        expect_error(proc, 3, "torch: no Linux x86-64 wheel of torch 2.5.* with local tag +cu124",
                     f"{index}/whl/cu124")
        check("newest there: 2.6.0+cu124, 2.5.3+cu121; change torch in .cudaenv" in proc.stderr, proc.stderr)
        check(not (project / ".cudaenv.lock").exists(), "no lock written")


@case
def a_framework_pypi_serves_is_read_from_pip_index_url_with_its_extras_kept(tmp):
    toolkit_release(tmp / "mirror", "12.9.1", "12.9.86")
    # JAX's plugin asks for cuDNN >= 9.8; the newest with a CUDA 12 build is 9.28.0 (PYPI_CUDNN).
    cudnn_release(tmp / "mirror", "9.28.0", "9.28.0.1")
    for version in ("0.4.35", "0.5.0", "0.6.0rc1"):
        framework_wheel(tmp / "wheels", "jax", version, "any")  # pure Python, as JAX is
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12"\n[frameworks]\njax = "12"\n'
                                      '[targets.h100]\ndriver = "580.65.06"\narch = ["9.0"]\n')
    (tmp / "sysroot").mkdir()
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, control):
        env = env_for(tmp, url, "http://127.0.0.1:9", PIP_INDEX_URL=f"{index}/simple")
        run_in(["lock"], env, project, expect=0)
        path = project / ".cudaenv.lock"
        jax = tomllib.loads(path.read_text())["frameworks"]["jax"] if path.exists() else {}
        check(jax.get("version") == "0.5.0" and jax.get("pip") == 'pip install -U "jax[cuda12]==0.5.0"'
              and jax.get("index_url") == "https://pypi.org/simple", f"the newest final release: {jax}")
        log_file = control.parent / "control.json.log"
        check(log_file.exists() and "GET /simple/jax/" in log_file.read_text(), "read through PIP_INDEX_URL")


@case
def a_lock_of_the_series_only_form_is_stale_for_the_check(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index)
        run_in(["lock"], env, project, expect=0)
        lock = (project / ".cudaenv.lock").read_text()
        old = lock.replace("'2.5.1+cu124'", "'2.5.*+cu124'").replace(PIP_2_5_1, 'pip install "torch==2.5.*"')
        check(old != lock, "the older form written")
        (project / ".cudaenv.lock").write_text(old)
        proc = run_in(["lock", "--check"], env, project)
        expect_error(proc, 1, "the lock is stale", "1 place")
        check('frameworks.torch.version: the lock has "2.5.*+cu124", now an exact release of 2.5.* with local '
              'tag +cu124' in proc.stdout, proc.stdout)
        check("hint: run cudaenv lock" in proc.stderr, proc.stderr)


@case
def on_a_mirror_without_cudnn_torch_locks_with_the_cudnn_of_its_wheels(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")  # no cudnn/ on this mirror
    framework_wheel(tmp / "wheels", "torch", "2.5.1+cu124", "linux_x86_64")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(PROJECT)
    (tmp / "sysroot").mkdir()
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index)
        proc = run_in(["lock"], env, project, expect=0)
        check("cudaenv: note:" in proc.stderr and "this mirror carries no cuDNN" in proc.stderr
              and "torch brings its own cuDNN in its wheels, so the lock holds no cuDNN archive" in proc.stderr,
              proc.stderr)
        check("--cudnn" not in proc.stderr, "lock has no --cudnn flag to leave out: " + proc.stderr)
        lock = tomllib.loads((project / ".cudaenv.lock").read_text())
        check("cudnn" not in lock and lock["frameworks"]["torch"]["version"] == "2.5.1+cu124", str(lock))
        run_in(["lock", "--check"], env, project, expect=0)
        # A cuDNN .cudaenv pins itself is not dropped: the error says what to change, in .cudaenv's words.
        (project / ".cudaenv").write_text('cudnn = "9.1"\n' + PROJECT)
        proc = run_in(["lock"], env, project)
        expect_error(proc, 3, "this mirror carries no cuDNN")
        check("remove cudnn from .cudaenv (torch brings its own cuDNN in its wheels)" in proc.stderr
              and "leave out --cudnn" not in proc.stderr, proc.stderr)


finish()
