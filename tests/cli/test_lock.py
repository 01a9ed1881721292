"""`cudaenv lock` and `cudaenv lock --check` for a project that declares two hardware classes, from
a synthetic mirror served over HTTP: one set for both targets (minor-compat on the older driver),
each archive with the mirror's sha256 and size; the check is clean, then stale after an edit of
.cudaenv, after a database update and after the mirror replaced an archive; no fit names the
target that breaks it."""

import json
import shutil
import tomllib

from framework_wheels import framework_index, framework_wheel
from harness import case, check, clean_env, expect_error, finish, mirror_server, run, run_in
from synthetic_mirror import publish_database, cudnn_release, toolkit_release


PROJECT = """# the team's pin
cuda = "12.4"
cudnn = "9.1"
[frameworks]
torch = "2.5"
[targets.a100]
driver = "535.104.05"   # the oldest driver on those machines
arch = ["8.0"]
[targets.h100]
driver = "550.54.15"
arch = ["9.0"]
"""


def setup(tmp, text=PROJECT):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(text)
    (tmp / "sysroot").mkdir()
    framework_wheel(tmp / "wheels", "torch", "2.5.1+cu124")
    return project


def env_for(tmp, url, root="root", index="http://127.0.0.1:9"):
    """The environment for a mirror at `url` and framework indexes below `index`."""
    return clean_env(tmp, CUDAENV_ROOT=tmp / root, CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_MIRROR=url,
                     PWD=tmp / "repo", CUDAENV_HTTP_BACKOFF_MS=20, CUDAENV_HTTP_ATTEMPTS=2,
                     CUDAENV_FRAMEWORK_INDEX=f"{index}/whl", PIP_INDEX_URL=f"{index}/simple")


cudaenv = run_in  # cudaenv ARGS in a directory, with an optional expected exit


def mirror_manifest(tmp, product, version):
    return json.loads((tmp / "mirror" / product / "redist" / f"redistrib_{version}.json").read_text())


@case
def one_set_for_two_targets_with_the_mirrors_digests_then_the_check_is_clean(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index=index)
        proc = cudaenv(["lock"], env, project, expect=0)
        check(f"wrote {project}/.cudaenv.lock: CUDA 12.4.1" in proc.stdout, proc.stdout)
        lock = tomllib.loads((project / ".cudaenv.lock").read_text())
        check(lock["lock_version"] == 1 and lock["generated_by"].startswith("cudaenv "), str(lock))
        check(len(lock["database"]["sha256"]) == 64 and lock["database"]["revision"], str(lock["database"]))
        check(lock["toolkit"]["version"] == "12.4.1", str(lock["toolkit"]))
        manifest = mirror_manifest(tmp, "cuda", "12.4.1")
        locked = {c["name"]: c for c in lock["toolkit"]["components"]}
        check(sorted(locked) == ["cuda_cccl", "cuda_cudart", "cuda_nvcc"], f"the toolkit's archives: {sorted(locked)}")
        for name, component in locked.items():
            entry = manifest[name]["linux-x86_64"]
            check(component["sha256"] == entry["sha256"] and component["size"] == int(entry["size"])
                  and component["relative_path"] == entry["relative_path"] and component["version"] == "12.4.131",
                  f"{name} as the mirror lists it: {component}")
        check(lock["cudnn"]["version"] == "9.1.0" and lock["cudnn"]["cuda_variant"] == "cuda12", str(lock["cudnn"]))
        check(lock["cudnn"]["components"][0]["sha256"] ==
              mirror_manifest(tmp, "cudnn", "9.1.0")["cudnn"]["linux-x86_64"]["cuda12"]["sha256"], str(lock["cudnn"]))
        torch = lock["frameworks"]["torch"]
        # cu124 is the build PyPI serves for torch 2.5 untagged; the lock pins the build itself.
        check(torch["version"] == "2.5.1+cu124", str(torch))
        check(torch["index_url"] == "https://download.pytorch.org/whl/cu124" and torch["pip"] ==
              "pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124", str(torch))
        a100, h100 = lock["targets"]["a100"], lock["targets"]["h100"]
        check(a100["mode"] == "minor-compat" and a100["driver"] == "535.104.05", f"a100 runs 12.4 by minor compat: {a100}")
        check(h100["mode"] == "full", f"h100's driver is 12.4.1's floor: {h100}")
        check(a100["TORCH_CUDA_ARCH_LIST"] == "8.0" and a100["CMAKE_CUDA_ARCHITECTURES"] == "80", str(a100))
        check(h100["TORCH_CUDA_ARCH_LIST"] == "9.0" and h100["CMAKE_CUDA_ARCHITECTURES"] == "90", str(h100))
        check(cudaenv(["lock", "--check"], env, project / ".").returncode == 0, "the fresh lock is current")
        first = (project / ".cudaenv.lock").read_text()
        cudaenv(["lock"], env, project, expect=0)
        check((project / ".cudaenv.lock").read_text() == first, "locking again writes the same file")


@case
def the_check_names_every_difference_after_an_edit_of_the_project_file(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index=index)
        cudaenv(["lock"], env, project, expect=0)
        before = (project / ".cudaenv.lock").read_text()
        (project / ".cudaenv").write_text(PROJECT.replace('arch = ["9.0"]', 'arch = ["8.0", "9.0"]')
                                          .replace('cudnn = "9.1"', 'cudnn = "9.1.0"'))
        proc = cudaenv(["lock", "--check"], env, project)
        expect_error(proc, 1, "the lock is stale", ".cudaenv.lock", "4 places")
        check('request.cudnn: the lock has "9.1", now "9.1.0"' in proc.stdout, proc.stdout)
        check('targets.h100.arch: the lock has "9.0", now "8.0, 9.0"' in proc.stdout, proc.stdout)
        check("hint: run cudaenv lock" in proc.stderr, proc.stderr)
        check((project / ".cudaenv.lock").read_text() == before, "--check writes nothing")


@case
def the_check_is_stale_after_a_database_update_and_after_the_mirror_replaced_an_archive(tmp):
    project = setup(tmp)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index=index)
        cudaenv(["lock"], env, project, expect=0)
        old = tomllib.loads((project / ".cudaenv.lock").read_text())["database"]["revision"]
        # The mirror replaces cuda_nvcc and rewrites its manifest to agree with the new file.
        toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=64)
        proc = cudaenv(["lock", "--check"], env, project)
        expect_error(proc, 1, "the lock is stale")
        check("toolkit.components.cuda_nvcc.sha256: the lock has" in proc.stdout, proc.stdout)
    newer = f"{old}.1"
    publish_database(tmp / "dbmirror", newer)
    with mirror_server(tmp / "dbmirror") as (url, _):
        run(["db", "update", "--mirror", url], env_for(tmp, url), check_exit=0)
    with mirror_server(tmp / "mirror") as (url, _), framework_index(tmp / "wheels") as (index, _):
        env = env_for(tmp, url, index=index)
        cudaenv(["lock"], env, project, expect=0)
        check(tomllib.loads((project / ".cudaenv.lock").read_text())["database"]["revision"] == newer,
              "the lock names the database it was resolved with")
        shutil.rmtree(tmp / "root" / "manifests")  # back to the compiled-in database
        proc = cudaenv(["lock", "--check"], env, project)
        expect_error(proc, 1, "the lock is stale")
        check(f'database.revision: the lock has "{newer}", now "{old}"' in proc.stdout, proc.stdout)


@case
def a_mirror_that_gains_a_release_leaves_the_lock_current_one_that_drops_it_makes_it_stale(tmp):
    """docs/lockfile.md: stale only when .cudaenv asks otherwise, what the lock names changed or
    vanished, or the database resolves the request differently. A release the mirror gains (a
    12.6 that `cuda = "12"` would now take) is none of these."""
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "12"\n[targets.h100]\ndriver = "550.54.15"\narch = ["9.0"]\n')
    (tmp / "sysroot").mkdir()
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, url)
        cudaenv(["lock"], env, project, expect=0)
        locked = (project / ".cudaenv.lock").read_text()
        check(tomllib.loads(locked)["toolkit"]["version"] == "12.4.1", locked)
        toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")  # the mirror grows
        proc = cudaenv(["lock", "--check"], env, project, expect=0)
        check("is current: CUDA 12.4.1" in proc.stdout, proc.stdout)
        fresh_home = dict(env, HOME=str(tmp / "teammate"), CUDAENV_ROOT=str(tmp / "teammate-root"))
        cudaenv(["sync", "--frozen"], fresh_home, project, expect=0)
        check((tmp / "teammate-root" / "toolkits" / "12.4.1" / "bin" / "nvcc").is_file(),
              "sync --frozen installed the locked 12.4.1")
        check((project / ".cudaenv.lock").read_text() == locked, "the lock is left as it was")
        # The mirror drops the locked release: what the lock names vanished.
        (tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json").unlink()
        proc = cudaenv(["lock", "--check"], env, project)
        expect_error(proc, 1, "the lock is stale")
        check("toolkit.version: 12.4.1 as locked cannot be resolved now" in proc.stdout, proc.stdout)


@case
def no_set_for_every_target_exits_4_naming_the_target_and_the_change(tmp):
    project = setup(tmp, PROJECT + '[targets.old]\ndriver = "470.57.02"\narch = ["7.0"]\n')
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["lock"], env_for(tmp, url), project)
        expect_error(proc, 4, 'no compatible set for target "old" (driver 470.57.02, arch 7.0)')
        check("hint:" in proc.stderr and "driver" in proc.stderr.split("hint:")[1], proc.stderr)
        check(not (project / ".cudaenv.lock").exists(), "no lock written")


@case
def a_bad_target_is_named_with_its_line(tmp):
    project = setup(tmp, 'cuda = "12.4"\n[targets.a100]\ndriver = "535.x"\narch = ["8.0"]\n')
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["lock"], env_for(tmp, url), project)
        expect_error(proc, 2, f"{project}/.cudaenv:3: targets.a100.driver must be a driver version such as "
                              '"535.104.05" or a branch such as "580"')


@case
def a_driver_branch_and_a_single_arch_are_what_people_write(tmp):
    """driver = "580" (or 580) is that branch's lowest release the database knows, 580.65.06 (CUDA
    13.0's floor): 13.0.0 runs there with full support. Read as the number 580 it would be below
    every CUDA 13 floor, and no set would fit."""
    toolkit_release(tmp / "mirror", "13.0.0", "13.0.48")
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "13.0"\n[targets.h100]\ndriver = "580"\narch = "9.0"\n'
                                      '[targets.b200]\ndriver = 580\narch = ["10.0"]\n')
    (tmp / "sysroot").mkdir()
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, url)
        proc = cudaenv(["lock"], env, project)
        check(proc.returncode == 0, f"lock with a branch and a single arch: {proc.returncode} {proc.stderr!r}")
        lock = tomllib.loads((project / ".cudaenv.lock").read_text()) if proc.returncode == 0 else {}
        check(lock.get("toolkit", {}).get("version") == "13.0.0", f"{lock.get('toolkit')}")
        h100 = lock.get("targets", {}).get("h100", {})
        check(h100.get("driver") == "580" and h100.get("arch") == ["9.0"] and h100.get("mode") == "full",
              f"the target as declared, with the branch's driver mode: {h100}")
        proc = cudaenv(["lock", "--check"], env, project, expect=0)
        check("is current" in proc.stdout, proc.stdout)


@case
def a_target_names_its_gpus_and_the_lock_records_their_architectures(tmp):
    """gpu = "H100" and "RTX 4090" are the database's 9.0 and 8.9; the lock records the names beside
    the architectures, so `env --target` (which reads no database) answers from it; a typo is exit 2
    with the nearest names, before anything is fetched."""
    toolkit_release(tmp / "mirror", "13.0.0", "13.0.48")
    project = tmp / "repo"
    project.mkdir()
    (tmp / "sysroot").mkdir()
    (project / ".cudaenv").write_text('cuda = "13.0"\n[targets.lab]\ndriver = "580"\n'
                                      'gpu = ["H100", "GeForce RTX 4090"]\n')
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, url)
        proc = cudaenv(["env", "--target", "lab"], env, project)
        expect_error(proc, 2, f"--target: targets.lab in {project}/.cudaenv names GPU models (gpu = ...)")
        proc = cudaenv(["lock"], env, project)
        check(proc.returncode == 0, f"lock with GPU names: {proc.returncode} {proc.stderr!r}")
        lock = tomllib.loads((project / ".cudaenv.lock").read_text()) if proc.returncode == 0 else {}
        lab = lock.get("targets", {}).get("lab", {})
        check(lab.get("gpu") == ["H100", "GeForce RTX 4090"] and lab.get("arch") == ["8.9", "9.0"] and
              lab.get("CMAKE_CUDA_ARCHITECTURES") == "89;90", f"the names and their architectures: {lab}")
        proc = cudaenv(["lock", "--check"], env, project, expect=0)
        check("is current" in proc.stdout, proc.stdout)
        proc = cudaenv(["env", "--target", "lab", "--shell", "json"], env, project, expect=0)
        check(json.loads(proc.stdout)["variables"].get("TORCH_CUDA_ARCH_LIST") == "8.9;9.0", proc.stdout)
        # Another GPU in the list: the lock no longer says what the target is.
        (project / ".cudaenv").write_text('cuda = "13.0"\n[targets.lab]\ndriver = "580"\n'
                                          'gpu = ["H100", "A100"]\n')
        proc = cudaenv(["lock", "--check"], env, project, expect=1)
        check("targets.lab.gpu" in proc.stdout, proc.stdout)
        (project / ".cudaenv").write_text('cuda = "13.0"\n[targets.lab]\ndriver = "580"\ngpu = "H10"\n')
        proc = cudaenv(["lock"], env, project)
        expect_error(proc, 2, f'{project}/.cudaenv:4: targets.lab.gpu: the database knows no GPU "H10"; '
                              'did you mean ', '"H100"')
        check('arch = ["8.0"]' in proc.stderr, proc.stderr)


@case
def no_targets_and_no_gpu_asks_to_declare_one(tmp):
    project = setup(tmp, 'cuda = "12.4"\n')
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["lock"], env_for(tmp, url), project)
        expect_error(proc, 2, "declares no [targets] and this machine has no NVIDIA GPU")
        check("hint: declare the machines it is for in .cudaenv: [targets.a100]" in proc.stderr, proc.stderr)


finish()
