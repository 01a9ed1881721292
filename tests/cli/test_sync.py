"""`cudaenv sync [--frozen]` installs exactly what .cudaenv.lock names, from a synthetic mirror
served over HTTP: on a fresh root, idempotently; a mirror that replaced an archive and rewrote its
manifest to match fails with exit 6 and installs nothing; --frozen refuses a missing or stale lock
(exit 1) and never rewrites it."""

import hashlib
import json
import shutil
import tomllib

from harness import case, check, clean_env, expect_error, finish, mirror_server, run_in
from synthetic_mirror import PLATFORM, cudnn_release, nvcc_script, pack, publish_database, toolkit_release

PROJECT = """cuda = "12.4"
cudnn = "9.1"
[targets.a100]
driver = "535.104.05"
arch = ["8.0"]
[targets.h100]
driver = "550.54.15"
arch = ["9.0"]
"""


def setup(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(PROJECT)
    (tmp / "sysroot").mkdir()
    return project


def env_for(tmp, url, root):
    return clean_env(tmp, CUDAENV_ROOT=tmp / root, CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_MIRROR=url,
                     CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2)


cudaenv = run_in  # cudaenv ARGS in a directory, with an optional expected exit



def rewrite_archive(redist, manifest_name, entry_of, make, rewrite_manifest=True):
    """Puts `make(attempt)`'s bytes of the archive's own size in place of the archive the manifest
    entry `entry_of(manifest)` names, and (unless told not to) rewrites the manifest to agree with
    them, as a compromised mirror would."""
    manifest_path = redist / manifest_name
    manifest = json.loads(manifest_path.read_text())
    entry = entry_of(manifest)
    archive = redist / entry["relative_path"]
    size = archive.stat().st_size
    data = next((data for data in map(make, range(2000)) if len(data) == size), None)
    if data is None:
        raise AssertionError("no replacement of the same size")
    archive.write_bytes(data)
    if rewrite_manifest:
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        manifest_path.write_text(json.dumps(manifest, indent=4))


def replace_with_same_size(mirror, name):
    """Other bytes of the same size in place of the 12.4.1 archive `name`."""
    top = f"{name}-{PLATFORM}-12.4.131-archive"

    def make(attempt):
        script = nvcc_script("12.4.1", "12.4.131").replace("compiler driver", f"driver {attempt:08d}")
        return pack(top, [("bin/nvcc", script, 0o755), ("bin/nvcc.profile", "TOP = $(_HERE_)/..\n", 0o644)])

    rewrite_archive(mirror / "cuda" / "redist", "redistrib_12.4.1.json", lambda m: m[name][PLATFORM], make)


def replace_cudnn_with_same_size(mirror, rewrite_manifest=True):
    """Other bytes of the same size in place of cuDNN 9.1.0's cuda12 archive; the toolkit's
    archives stay as they were locked."""
    top = f"cudnn-{PLATFORM}-9.1.0.70_cuda12-archive"

    def make(attempt):
        return pack(top, [("lib/libcudnn.so.9", f"cudnn v2 {attempt:07d}", 0o644),
                          ("include/cudnn.h", "/* cuda12 */\n", 0o644)])

    rewrite_archive(mirror / "cudnn" / "redist", "redistrib_9.1.0.json", lambda m: m["cudnn"][PLATFORM]["cuda12"],
                    make, rewrite_manifest)


def installed(tmp, root, kind):
    directory = tmp / root / kind
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) if directory.exists() else []


@case
def sync_installs_the_locked_toolkit_and_cudnn_on_a_fresh_root_then_has_nothing_to_do(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        cudaenv(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        env = env_for(tmp, url, "node")
        proc = cudaenv(["sync", "--frozen"], env, project, expect=0)
        check("installed CUDA 12.4.1 (3 archives, each matching the lock)" in proc.stdout, proc.stdout)
        check("installed cuDNN 9.1.0" in proc.stdout, proc.stdout)
        check(installed(tmp, "node", "toolkits") == ["12.4.1"], str(installed(tmp, "node", "toolkits")))
        check(installed(tmp, "node", "cudnn") == ["9.1.0-cuda12"], str(installed(tmp, "node", "cudnn")))
        check((tmp / "node" / "toolkits" / "12.4.1" / "bin" / "nvcc").exists(), "nvcc is in place")
        again = cudaenv(["sync"], env, project, expect=0)
        check("CUDA 12.4.1 is already installed" in again.stdout, again.stdout)


@case
def a_mirror_that_replaced_an_archive_and_its_manifest_fails_with_exit_6_installing_nothing(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        cudaenv(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        locked = (project / ".cudaenv.lock").read_text()
        # Same name, same size, other bytes, and a manifest that agrees with them.
        replace_with_same_size(tmp / "mirror", "cuda_nvcc")
        proc = cudaenv(["sync"], env_for(tmp, url, "node"), project)
        expect_error(proc, 6, "cuda_nvcc")
        check("sha256" in proc.stderr, proc.stderr)
        check(installed(tmp, "node", "toolkits") == [], f"nothing installed: {installed(tmp, 'node', 'toolkits')}")
        check(installed(tmp, "node", "cudnn") == [], f"nothing installed: {installed(tmp, 'node', 'cudnn')}")
        check((project / ".cudaenv.lock").read_text() == locked, "the lock is not rewritten to the new digests")


@case
def a_replaced_cudnn_archive_fails_before_the_toolkit_is_placed(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        cudaenv(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        # The manifest still vouches for the locked bytes (a manifest that agrees with the new
        # ones is refused before any download); the file served is not them.
        replace_cudnn_with_same_size(tmp / "mirror", rewrite_manifest=False)
        env = env_for(tmp, url, "node")
        proc = cudaenv(["sync"], env, project)
        expect_error(proc, 6, "sha256 mismatch", "cudnn-linux-x86_64-9.1.0.70_cuda12-archive")
        check("nothing was installed" in proc.stderr, proc.stderr)
        check("hint: the mirror serves another file than .cudaenv.lock pinned" in proc.stderr
              and "run cudaenv lock" in proc.stderr and "again" not in proc.stderr, proc.stderr)
        check(installed(tmp, "node", "toolkits") == [], f"no toolkit: {installed(tmp, 'node', 'toolkits')}")
        check(installed(tmp, "node", "cudnn") == [], f"no cuDNN: {installed(tmp, 'node', 'cudnn')}")
        check(not (tmp / "node" / "shims").exists() or not any((tmp / "node" / "shims").iterdir()),
              "no shims for a toolkit that is not there")
        # The toolkit's archives were checked and kept: once the mirror is put right, sync resumes.
        cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
        proc = cudaenv(["sync", "--frozen"], env, project, expect=0)
        check("installed CUDA 12.4.1" in proc.stdout and "installed cuDNN 9.1.0" in proc.stdout, proc.stdout)


@case
def frozen_refuses_a_stale_or_missing_lock_and_leaves_it_alone(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, url, "node")
        proc = cudaenv(["sync", "--frozen"], env, project)
        expect_error(proc, 1, "--frozen", ".cudaenv.lock does not exist")
        check(not (project / ".cudaenv.lock").exists(), "--frozen writes no lock")
        cudaenv(["lock"], env_for(tmp, url, "dev"), project, expect=0)
        locked = (project / ".cudaenv.lock").read_text()
        (project / ".cudaenv").write_text(PROJECT.replace('driver = "535.104.05"', 'driver = "545.23.06"'))
        proc = cudaenv(["sync", "--frozen"], env, project)
        expect_error(proc, 1, "--frozen: the lock is stale")
        check('targets.a100.driver: the lock has "535.104.05", now "545.23.06"' in proc.stdout, proc.stdout)
        check((project / ".cudaenv.lock").read_text() == locked, "--frozen never rewrites the lock")
        check(installed(tmp, "node", "toolkits") == [], "nothing installed")
        # Without --frozen, a stale lock is written again first, then installed.
        proc = cudaenv(["sync"], env, project, expect=0)
        check("wrote " in proc.stdout and "installed CUDA 12.4.1" in proc.stdout, proc.stdout)
        relocked = tomllib.loads((project / ".cudaenv.lock").read_text())
        check(relocked["targets"]["a100"]["driver"] == "545.23.06", "the new lock has the new floor")


@case
def frozen_refuses_a_lock_stale_against_the_database_or_the_mirror(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        cudaenv(["lock"], env_for(tmp, url, "dev"), project, expect=0)
    locked = (project / ".cudaenv.lock").read_text()
    old = tomllib.loads(locked)["database"]["revision"]
    newer = f"{old}.1"
    publish_database(tmp / "dbmirror", newer)
    with mirror_server(tmp / "dbmirror") as (url, _):
        cudaenv(["db", "update", "--mirror", url], env_for(tmp, url, "node"), project, expect=0)
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, url, "node")
        proc = cudaenv(["sync", "--frozen"], env, project)
        expect_error(proc, 1, "--frozen: the lock is stale", "nothing was installed")
        check(f'database.revision: the lock has "{old}", now "{newer}"' in proc.stdout, proc.stdout)
        check("run cudaenv lock" in proc.stderr, proc.stderr)
        check(installed(tmp, "node", "toolkits") == [] and installed(tmp, "node", "cudnn") == [],
              "nothing installed")
        check((project / ".cudaenv.lock").read_text() == locked, "--frozen never rewrites the lock")
        # The same node on the database the lock names, with a mirror that replaced an archive:
        # the mirror no longer vouches for what the lock pins, which is an integrity failure
        # before it is staleness (test_sync_untrusted.py has every such case).
        shutil.rmtree(tmp / "node" / "manifests")  # back to the compiled-in database
        replace_with_same_size(tmp / "mirror", "cuda_nvcc")
        proc = cudaenv(["sync", "--frozen"], env, project)
        expect_error(proc, 6, "toolkit.components.cuda_nvcc.sha256: the lock has", "nothing was installed")
        check("database.revision" not in proc.stdout + proc.stderr, proc.stdout)
        check(installed(tmp, "node", "toolkits") == [], "nothing installed")


finish()
