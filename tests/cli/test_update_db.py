"""scripts/update-db: regenerating the mechanical part of manifests/ from NVIDIA's
redistrib_*.json files (a directory or a loopback mirror), the report of what changed, the check
that names the hand-sourced facts a new release still lacks, and cudaenv reading the result."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness import FIXTURES, case, check, clean_env, finish, mirror_server, run

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "update-db"
MANIFESTS = REPO / "manifests"
SAMPLES = FIXTURES / "redist"  # NVIDIA's own files, as in shared/data/redist


def update_db(*args, expect=None):
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=60)
    if expect is not None and proc.returncode != expect:
        raise AssertionError(f"update-db {' '.join(map(str, args))} exited {proc.returncode}, "
                             f"expected {expect}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def manifests_copy(tmp):
    target = tmp / "manifests"
    shutil.copytree(MANIFESTS, target)
    return target


def samples_copy(tmp):
    target = tmp / "redist"
    shutil.copytree(SAMPLES, target)
    return target


def add_release(redist, version, nvcc):
    """A new CUDA release in the redist data: 13.0.2's manifest under a new version."""
    doc = json.loads((SAMPLES / "cuda-redistrib_13.0.2.json").read_text())
    doc["release_label"] = version
    doc["release_date"] = "2027-01-15"
    doc["cuda_nvcc"]["version"] = nvcc
    (redist / f"redistrib_{version}.json").write_text(json.dumps(doc, indent=4))


def same_files(a, b):
    return all((a / name).read_bytes() == (b / name).read_bytes() for name in ("cuda.toml", "cudnn.toml"))


@case
def the_sample_manifests_reproduce_the_committed_data(tmp):
    target = manifests_copy(tmp)
    proc = update_db("--from", SAMPLES, "--manifests", target, "--check", expect=0)
    check("read 11 CUDA and 9 cuDNN manifests" in proc.stdout, proc.stdout)
    check("no changes" in proc.stdout, f"the committed rows are what the samples say:\n{proc.stdout}")
    check(same_files(MANIFESTS, target), "cuda.toml and cudnn.toml unchanged byte for byte")


@case
def a_changed_component_version_is_reported_and_written(tmp):
    target = manifests_copy(tmp)
    redist = samples_copy(tmp)
    path = redist / "cuda-redistrib_13.0.2.json"
    doc = json.loads(path.read_text())
    doc["cuda_nvcc"]["version"] = "13.0.99"
    path.write_text(json.dumps(doc))
    proc = update_db("--from", redist, "--manifests", target, expect=0)
    check("changed CUDA 13.0.2: nvcc 13.0.88 -> 13.0.99" in proc.stdout, proc.stdout)
    check("; components.cuda_nvcc 13.0.88 -> 13.0.99" in proc.stdout,
          f"the row's component table, the wheel versions, by its own keys: {proc.stdout}")
    text = (target / "cuda.toml").read_text()
    check(re.search(r'version = "13.0.2"\n(?:.*\n)*?nvcc = "13.0.99"', text) is not None, "row rewritten")
    hand = text.split("# ---- BEGIN GENERATED")[0]
    check(hand == (MANIFESTS / "cuda.toml").read_text().split("# ---- BEGIN GENERATED")[0],
          "the hand-written part is untouched")


@case
def a_new_release_makes_the_check_name_the_missing_facts(tmp):
    target = manifests_copy(tmp)
    redist = samples_copy(tmp)
    add_release(redist, "13.9.0", "13.9.41")
    proc = update_db("--from", redist, "--manifests", target, "--check", expect=1)
    check("added CUDA 13.9.0" in proc.stdout, proc.stdout)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("CUDA 13.9.0: missing")), "")
    for needle in ("min_driver", "host compiler limits ([[host_compiler]] matching 13.9)",
                   "driver branch (drivers.toml [[branch]] with max_cuda >= 13.9)"):
        check(needle in line, f"{needle!r} named: {proc.stdout}")
    check(not any(l.startswith("CUDA 13.0.2: missing") for l in proc.stdout.splitlines()),
          "releases with their facts are not named")


@case
def cudaenv_offers_a_regenerated_release_only_as_unchecked(tmp):
    target = manifests_copy(tmp)
    redist = samples_copy(tmp)
    add_release(redist, "13.9.0", "13.9.41")
    update_db("--from", redist, "--manifests", target, expect=0)
    root = tmp / "root"
    (root / "manifests").mkdir(parents=True)
    for name in ("cuda.toml", "cudnn.toml"):  # a newer revision replaces the compiled-in file
        text = re.sub(r'revision = "[0-9-]+"', 'revision = "2099-01-01"', (target / name).read_text(), 1)
        (root / "manifests" / name).write_text(text)
    env = clean_env(tmp, CUDAENV_ROOT=root)
    proc = run(["resolve", "--no-detect", "--cuda", "13.9", "--json"], env, check_exit=4)
    out = json.loads(proc.stdout)
    check(any("--include-unchecked" in s for s in out["suggestions"]), f"{out['suggestions']}")
    proc = run(["resolve", "--no-detect", "--cuda", "13.9", "--include-unchecked", "--json"], env,
               check_exit=0)
    out = json.loads(proc.stdout)
    check(out["cuda"] == {"version": "13.9.0", "driver_mode": "unchecked", "checked": False},
          f"cuda {out['cuda']}")


@case
def a_loopback_mirror_serves_the_same_data(tmp):
    mirror = tmp / "mirror"
    for product in ("cuda", "cudnn"):
        (mirror / product / "redist").mkdir(parents=True)
    for path in SAMPLES.glob("*.json"):
        product, name = path.name.split("-", 1)
        shutil.copyfile(path, mirror / product / "redist" / name)
    target = manifests_copy(tmp)
    with mirror_server(mirror) as (url, _):
        proc = update_db("--from", url, "--manifests", target, expect=0)
    check("read 11 CUDA and 9 cuDNN manifests" in proc.stdout, proc.stdout)
    check("no changes" in proc.stdout, proc.stdout)
    check(same_files(MANIFESTS, target), "unchanged")


@case
def bad_input_is_one_line_and_writes_nothing(tmp):
    target = manifests_copy(tmp)
    redist = samples_copy(tmp)
    (redist / "redistrib_13.9.0.json").write_text('{"cuda_nvcc": ')
    proc = update_db("--from", redist, "--manifests", target, expect=1)
    lines = proc.stderr.strip().splitlines()
    check(len(lines) == 1 and "redistrib_13.9.0.json: not valid JSON" in lines[0], proc.stderr)
    check(same_files(MANIFESTS, target), "nothing written")
    proc = update_db("--from", "http://127.0.0.1:9", "--manifests", target, expect=5)
    check(proc.stderr.count("\n") == 1 and "127.0.0.1:9/cuda/redist/" in proc.stderr, proc.stderr)
    proc = update_db("--from", tmp / "absent", "--manifests", target, expect=2)
    check("neither a directory nor an http(s) URL" in proc.stderr, proc.stderr)


finish()
