"""`cudaenv mirror create`: copies releases from an HTTP mirror into a directory in NVIDIA's
layout, every archive checked; the directory then serves `cudaenv install` through file://."""

import hashlib
import json

from harness import case, check, clean_env, finish, mirror_server, run, expect_error
from synthetic_mirror import PLATFORM, pack, toolkit_release


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, **{"CUDAENV_ROOT": tmp / "root", "CUDAENV_SYSROOT": tmp / "sysroot",
                             "CUDAENV_HTTP_BACKOFF_MS": 20, **extra})


def requests(faults):
    log = faults.parent / (faults.name + ".log")
    return [tuple(line.split(" ", 2)) for line in log.read_text().splitlines()] if log.exists() else []


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_below(directory):
    """The mirrored releases; the compatibility database under cudaenv/db has its own test."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*")
                  if p.is_file() and not str(p.relative_to(directory)).startswith("cudaenv/"))


def cudnn_release(root, version, build, variants):
    redist = root / "cudnn" / "redist"
    entry = {}
    for major in variants:
        top = f"cudnn-{PLATFORM}-{build}_cuda{major}-archive"
        relative = f"cudnn/{PLATFORM}/{top}.tar.xz"
        data = pack(top, [("lib/libcudnn.so.9", f"cuda{major}", 0o644)])
        (redist / "cudnn" / PLATFORM).mkdir(parents=True, exist_ok=True)
        (redist / relative).write_bytes(data)
        entry[f"cuda{major}"] = {"relative_path": relative, "sha256": hashlib.sha256(data).hexdigest(),
                                 "size": str(len(data))}
    manifest = {"release_date": "2024-04-12", "release_label": version, "release_product": "cudnn",
                "cudnn": {"name": "cuDNN", "license": "cudnn", "version": build, PLATFORM: entry,
                          "cuda_variant": list(variants)}}
    (redist / f"redistrib_{version}.json").write_text(json.dumps(manifest))
    return manifest


@case
def mirror_create_copies_the_chosen_components_and_serves_installs(tmp):
    upstream = toolkit_release(tmp / "upstream", "12.4.1", "12.4.131", padding=20_000)
    toolkit_release(tmp / "upstream", "12.6.3", "12.6.85")
    out = tmp / "offline"
    with mirror_server(tmp / "upstream") as (url, faults):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        proc = run(["mirror", "create", str(out), "--cuda", "12.4", "--components", "cuda_nvcc,cuda_cudart"],
                   env, check_exit=0)
        check(proc.stdout.splitlines()[0] == f"mirrored cuda 12.4.1 (2 archives) into {out}", proc.stdout)
        nvcc = upstream["cuda_nvcc"][PLATFORM]
        cudart = upstream["cuda_cudart"][PLATFORM]
        check(files_below(out) == sorted(["cuda/redist/redistrib_12.4.1.json", f"cuda/redist/{nvcc['relative_path']}",
                                          f"cuda/redist/{cudart['relative_path']}"]), f"layout: {files_below(out)}")
        written = json.loads((out / "cuda" / "redist" / "redistrib_12.4.1.json").read_text())
        check(sorted(written) == ["cuda_cudart", "cuda_nvcc", "release_date", "release_label", "release_product"],
              f"only the mirrored components are listed: {sorted(written)}")
        check(written["cuda_nvcc"] == upstream["cuda_nvcc"], "entries as upstream wrote them")
        for entry in (nvcc, cudart):
            check(sha256(out / "cuda" / "redist" / entry["relative_path"]) == entry["sha256"], entry["relative_path"])

        archives_before = len([r for r in requests(faults) if r[1].endswith(".tar.xz")])
        run(["mirror", "create", str(out), "--cuda", "12.4.1", "--components", "cuda_nvcc,cuda_cudart"],
            env, check_exit=0)
        check(len([r for r in requests(faults) if r[1].endswith(".tar.xz")]) == archives_before,
              "a second run finds every archive complete and downloads nothing")

    # The upstream server is gone: the directory alone serves the install.
    env = env_for(tmp)
    listed = run(["list-remote", "--mirror", f"file://{out}"], env, check_exit=0)
    check(listed.stdout == "12.4.1\n", listed.stdout)
    run(["install", "12.4", "--mirror", f"file://{out}"], env, check_exit=0)
    receipt = json.loads((tmp / "root" / "toolkits" / "12.4.1" / "cudaenv-receipt.json").read_text())
    check(sorted(c["name"] for c in receipt["components"]) == ["cuda_cudart", "cuda_nvcc"], f"{receipt}")
    check(receipt["mirror"] == f"file://{out}", receipt["mirror"])
    # A plain directory path works as well.
    run(["install", "12.4.1", "--force", "--mirror", str(out) + "/"], env, check_exit=0)


@case
def a_corrupt_upstream_archive_fails_and_is_removed(tmp):
    upstream = toolkit_release(tmp / "upstream", "12.4.1", "12.4.131", padding=20_000)
    nvcc = upstream["cuda_nvcc"][PLATFORM]
    out = tmp / "offline"
    with mirror_server(tmp / "upstream", {f"/cuda/redist/{nvcc['relative_path']}": {"corrupt_at": 500}}) as (url, _):
        proc = run(["mirror", "create", str(out), "--cuda", "12.4.1", "--mirror", url], env_for(tmp))
        expect_error(proc, 6,
                     f"sha256 mismatch for {url}/cuda/redist/{nvcc['relative_path']}: expected {nvcc['sha256']}, got ")
        check(not (out / "cuda" / "redist" / nvcc["relative_path"]).exists(), "the bad file is removed")
        check(not (out / "cuda" / "redist" / "redistrib_12.4.1.json").exists(),
              "no manifest: the mirror never lists a release it does not hold")


@case
def an_interrupted_mirror_create_resumes(tmp):
    upstream = toolkit_release(tmp / "upstream", "12.4.1", "12.4.131", padding=300_000)
    nvcc = upstream["cuda_nvcc"][PLATFORM]
    path = f"/cuda/redist/{nvcc['relative_path']}"
    out = tmp / "offline"
    with mirror_server(tmp / "upstream", {path: {"drop_after": 100_000}}) as (url, faults):
        env = env_for(tmp, CUDAENV_MIRROR=url, CUDAENV_HTTP_ATTEMPTS=1)
        expect_error(run(["mirror", "create", str(out), "--cuda", "12.4.1"], env), 5, url + path)
        check((out / "cuda" / "redist" / nvcc["relative_path"]).stat().st_size == 100_000, "partial file kept")
        check(not (out / "cuda" / "redist" / "redistrib_12.4.1.json").exists(), "no manifest yet")
        faults.write_text("{}")
        run(["mirror", "create", str(out), "--cuda", "12.4.1"], env, check_exit=0)
        check([r[2] for r in requests(faults) if r[1] == path][-1] == "bytes=100000-", "resumed")
        check(sha256(out / "cuda" / "redist" / nvcc["relative_path"]) == nvcc["sha256"], "complete and intact")


@case
def mirror_create_copies_every_cuda_variant_of_a_cudnn_release(tmp):
    toolkit_release(tmp / "upstream", "12.4.1", "12.4.131")
    manifest = cudnn_release(tmp / "upstream", "9.1.0", "9.1.0.70", ("12", "13"))
    out = tmp / "offline"
    with mirror_server(tmp / "upstream") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        proc = run(["mirror", "create", str(out), "--cuda", "12.4.1", "--cudnn", "9.1"], env, check_exit=0)
        check(f"mirrored cudnn 9.1.0 (2 archives) into {out}" in proc.stdout, proc.stdout)
        for variant in ("cuda12", "cuda13"):
            entry = manifest["cudnn"][PLATFORM][variant]
            check(sha256(out / "cudnn" / "redist" / entry["relative_path"]) == entry["sha256"], variant)
    env = env_for(tmp, CUDAENV_MIRROR=str(out))
    run(["install", "12.4.1", "--cudnn", "9"], env, check_exit=0)
    check((tmp / "root" / "cudnn" / "9.1.0-cuda12" / "lib" / "libcudnn.so.9").read_text() == "cuda12", "cuda12 build")


@case
def mirror_create_needs_a_release(tmp):
    expect_error(run(["mirror", "create", str(tmp / "out")], env_for(tmp)), 2, "nothing to mirror")
    expect_error(run(["mirror", "create", str(tmp / "out"), "--cuda", "not-a-version"], env_for(tmp)), 2, "--cuda")
    check(not (tmp / "out").exists(), "nothing created")


finish()
