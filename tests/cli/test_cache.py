"""`cudaenv cache` shows what the store keeps besides the installs; `cache prune` removes only what
nothing needs (never what a running install holds: the test holds the same locks an install
takes), `cache clean` removes the downloads, manifests and verify builds. Toolkits come from a
synthetic mirror served over HTTP."""

import fcntl
import json
import os
from pathlib import Path

from harness import case, check, clean_env, finish, mirror_server, run
from synthetic_mirror import toolkit_release


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", **extra)


def names(directory):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def hold(lock_file):
    """Takes the lock a running install would hold on `lock_file`; close the result to release."""
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def leftovers(root):
    """What killed installs and verify leave: a stale staging directory of an install that
    died, one a running install holds, a partial download it is writing, a verify build."""
    toolkits = root / "toolkits"
    (toolkits / ".staging-12.9.9-4242" / "bin").mkdir(parents=True)
    (toolkits / ".staging-12.9.9-4242" / "bin" / "nvcc").write_bytes(os.urandom(300_000))
    (toolkits / ".lock-12.9.9").write_text("")
    (toolkits / ".staging-12.8.0-4343").mkdir()
    (toolkits / ".staging-12.8.0-4343" / "half").write_bytes(b"x" * 1000)
    (root / "cache" / "downloads" / "cuda_nvcc-running.tar.xz").write_bytes(b"y" * 5000)
    (root / "cache" / "verify" / "12.4.131-sm_80-abc").mkdir(parents=True)
    (root / "cache" / "verify" / "12.4.131-sm_80-abc" / "device_query").write_bytes(b"z" * 70_000)
    return [hold(toolkits / ".lock-12.8.0"), hold(root / "cache" / "downloads" / "cuda_nvcc-running.tar.xz.lock")]


@case
def sizes_then_prune_then_clean(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=40_000)
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85", padding=40_000)
    root = tmp / "root"
    downloads = root / "cache" / "downloads"
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        run(["install", "12.4.1"], env, check_exit=0)
        run(["install", "12.6.3"], env, check_exit=0)
        run(["uninstall", "12.6.3"], env, check_exit=0)
        held = leftovers(root)
        kept_12_4 = [n for n in names(downloads) if "12.4" in n and not n.endswith(".lock")]
        gone_12_6 = [n for n in names(downloads) if "12.6" in n and not n.endswith(".lock")]
        check(len(kept_12_4) == 3 and len(gone_12_6) == 3, f"downloads: {names(downloads)}")

        shown = json.loads(run(["cache", "--json"], env, check_exit=0).stdout)
        d = shown["downloads"]
        check(d["count"] == 7 and d["prunable"] == 3 and d["in_use"] == 1, f"downloads: {d}")
        check(d["bytes"] > 165_000 and d["prunable_bytes"] > 80_000, f"download sizes: {d}")
        s = shown["staging"]
        check(s["count"] == 2 and s["prunable"] == 1 and s["in_use"] == 1 and s["bytes"] >= 301_000, f"staging: {s}")
        check(shown["verify_builds"]["count"] == 1 and shown["verify_builds"]["bytes"] == 70_000, f"{shown['verify_builds']}")
        # 12.6.3's lock guards nothing now; 12.9.9's still guards its staging directory.
        check(shown["locks"]["prunable"] >= 1 and shown["locks"]["in_use"] == 2, f"locks: {shown['locks']}")
        u = shown["unpacked"]
        check(u["count"] == 6 and u["prunable"] == 3 and u["prunable_bytes"] > 80_000,
              f"the unpacked archives: 12.6.3's three no prefix links: {u}")
        text = run(["cache"], env, check_exit=0).stdout
        check("7 downloads" in text and "KiB" in text and "1 in use by a running install" in text, text)
        check("'cudaenv cache prune' frees" in text, text)

        pruned = run(["cache", "prune"], env, check_exit=0)
        check(pruned.stdout.startswith("removed 3 downloads") and "1 staging directory" in pruned.stdout, pruned.stdout)
        check("kept 1 download, 1 staging directory: in use by a running install" in pruned.stdout, pruned.stdout)
        left = names(downloads)
        check(kept_12_4 and gone_12_6, f"both releases had downloads to judge: {kept_12_4} {gone_12_6}")
        check(all(n in left for n in kept_12_4) and not any(n in left for n in gone_12_6), f"after prune: {left}")
        check("cuda_nvcc-running.tar.xz" in left, f"the download being written stays: {left}")
        toolkits = names(root / "toolkits")
        check(".staging-12.9.9-4242" not in toolkits and ".lock-12.9.9" not in toolkits, f"{toolkits}")
        check(".lock-12.6.3" not in toolkits, f"the lock of an uninstalled version goes: {toolkits}")
        check(".staging-12.8.0-4343" in toolkits and ".lock-12.8.0" in toolkits, f"the running install's stay: {toolkits}")
        check(".lock-12.4.1" in toolkits and "12.4.1" in toolkits, f"{toolkits}")
        check(names(root / "cache" / "verify") == ["12.4.131-sm_80-abc"], "prune keeps verify builds")

        for fd in held:  # the "install" ends without cleaning up: now its leftovers are stale
            os.close(fd)
        again = run(["cache", "prune"], env, check_exit=0)
        check(".staging-12.8.0-4343" not in names(root / "toolkits"), f"{again.stdout} {names(root / 'toolkits')}")

        unpacked = [n for n in names(root / "cache" / "unpacked") if not n.endswith(".lock")]
        check(len(unpacked) == 3, f"prune left the unpacked archives 12.4.1 links: {unpacked}")

        cleaned = run(["cache", "clean"], env, check_exit=0)
        check("1 verify build" in cleaned.stdout and "freed" in cleaned.stdout, cleaned.stdout)
        check(names(downloads) == [] and names(root / "cache" / "verify") == [], f"{names(downloads)}")
        check("nothing to remove" in run(["cache", "clean"], env, check_exit=0).stdout, "a second clean finds nothing")
        # The store still works: the toolkit stays, and a reinstall links the unpacked archives
        # it already has, downloading nothing.
        check(os.access(root / "toolkits" / "12.4.1" / "bin" / "nvcc", os.X_OK), "12.4.1 is untouched")
        proc = run(["install", "12.4.1", "--force"], env, check_exit=0)
        check("installed CUDA 12.4.1" in proc.stdout and names(downloads) == [], f"{proc.stdout} {names(downloads)}")
        check(os.access(root / "toolkits" / "12.4.1" / "bin" / "nvcc", os.X_OK), "12.4.1 reinstalled")


@case
def a_second_release_downloads_and_unpacks_only_what_differs(tmp):
    """12.6.3's manifest names 12.4.1's nvcc, cccl and driver archives (as 13.0.3 shares most of
    13.0.2's): installing it after 12.4.1 fetches only cudart; the shared files are one copy on
    disk; uninstalling 12.4.1 leaves 12.6.3 whole, and prune keeps what 12.6.3 links."""
    mirror = tmp / "mirror"
    toolkit_release(mirror, "12.4.1", "12.4.131", padding=40_000)
    toolkit_release(mirror, "12.6.3", "12.6.85", padding=40_000)
    redist = mirror / "cuda" / "redist"
    older = json.loads((redist / "redistrib_12.4.1.json").read_text())
    newer = json.loads((redist / "redistrib_12.6.3.json").read_text())
    for component in ("cuda_nvcc", "cuda_cccl", "nvidia_driver"):
        newer[component] = older[component]
    (redist / "redistrib_12.6.3.json").write_text(json.dumps(newer))
    root = tmp / "root"
    with mirror_server(mirror) as (url, faults):
        def log():
            path = Path(str(faults) + ".log")
            return path.read_text().splitlines() if path.exists() else []
        env = env_for(tmp, CUDAENV_MIRROR=url)
        run(["install", "12.4.1"], env, check_exit=0)
        before = len([line for line in log() if ".tar.xz" in line])
        run(["install", "12.6.3"], env, check_exit=0)
        fetched = [line for line in log() if ".tar.xz" in line][before:]
        check(len(fetched) == 1 and "cuda_cudart" in fetched[0], f"only the archive that differs: {fetched}")
        old_prefix, new_prefix = root / "toolkits" / "12.4.1", root / "toolkits" / "12.6.3"
        nvcc_new = new_prefix / "bin" / "nvcc"
        check(os.path.samefile(old_prefix / "bin" / "nvcc", nvcc_new), "the shared nvcc is one file on disk")
        shared = sum(p.stat().st_size for p in new_prefix.rglob("*")
                     if p.is_file() and not p.is_symlink() and (old_prefix / p.relative_to(new_prefix)).exists()
                     and os.path.samefile(p, old_prefix / p.relative_to(new_prefix)))
        shown = json.loads(run(["cache", "--json"], env, check_exit=0).stdout)
        check(shared > 0 and shown["shared_bytes_saved"] == shared,
              f"the sharing is reported: {shown['shared_bytes_saved']} of {shared} bytes")
        check("shared unpacked files save" in run(["cache"], env, check_exit=0).stdout, "and said in text")
        run(["uninstall", "12.4.1", "--yes"], env, check_exit=0)
        check(os.access(nvcc_new, os.X_OK) and "12.4.131" in nvcc_new.read_text(), "12.6.3 keeps the shared files")
        run(["cache", "prune"], env, check_exit=0)
        kept = {n for n in names(root / "cache" / "unpacked") if not n.endswith(".lock")}
        linked = {f"{c['sha256']}.{c['name']}"
                  for c in json.loads((new_prefix / "cudaenv-receipt.json").read_text())["components"]}
        check(kept == linked, f"prune keeps what 12.6.3 links and drops 12.4.1's own: {kept} {linked}")
        proc = run(["install", "12.6.3", "--force"], env, check_exit=0)
        check(os.access(nvcc_new, os.X_OK), f"a reinstall links them again: {proc.stderr!r}")


@case
def an_empty_store_has_nothing(tmp):
    env = env_for(tmp)
    shown = json.loads(run(["cache", "--json"], env, check_exit=0).stdout)
    check(shown["total_bytes"] == 0 and shown["downloads"]["count"] == 0, f"{shown}")
    check(run(["cache", "prune"], env, check_exit=0).stdout == "nothing to remove\n", "prune")
    check(not (tmp / "root").exists(), "looking creates nothing")


finish()
