"""`cudaenv install` against a hostile or broken mirror: a server that sends more than the
manifest promises, an archive that unpacks without end, documents that trickle or never end,
modes an archive asks for, and links it plants under the names of cudaenv's own files."""

import hashlib
import io
import json
import lzma
import os
import stat
import tarfile
import time
from pathlib import Path

from harness import check, expect_error, finish, mirror_server, run
from install_helpers import (ARCHIVE_PATH, NVCC, PATIENCE, TOP, case, check_nothing_of, check_toolkit_runs, env_for,
                             finished, json_of, release_with, start)
from synthetic_mirror import PLATFORM, toolkit_release


# 2. No more than the manifest promises.

@case
def a_server_sending_more_than_the_manifest_size_is_cut_off(tmp):
    manifest = release_with(tmp, [])
    size = int(manifest["cuda_nvcc"][PLATFORM]["size"])
    cached = tmp / "root" / "cache" / "downloads" / f"{TOP}.tar.xz"
    for fault in ({"endless": True}, {"extra": 5000}):
        with mirror_server(tmp / "mirror", {ARCHIVE_PATH: fault}) as (url, _):
            proc = finished(start(["install", "12.4.1", "--mirror", url], env_for(tmp)),
                            f"an install from a server that sends more ({fault})")
            expect_error(proc, 6, f"{url}{ARCHIVE_PATH}: the mirror sends more than the {size} bytes")
            check_nothing_of(tmp, "12.4.1")
            check(not cached.exists() or cached.stat().st_size <= size, "no byte past the size is cached")


def bomb_release(tmp, files, each):
    """An nvcc archive of `files` files of `each` zero bytes: a few KiB that unpack to much more."""
    zeros = io.BytesIO()
    with tarfile.open(fileobj=zeros, mode="w") as tar:
        for i in range(files):
            info = tarfile.TarInfo(f"{TOP}/share/zeros{i}.bin")
            info.size = each
            tar.addfile(info, io.BytesIO(bytes(each)))
    return write_archive(tmp, lzma.compress(zeros.getvalue(), preset=0))


def write_archive(tmp, data):
    """Replaces the nvcc archive of release 12.4.1 by `data` (manifest updated to match)."""
    manifest = release_with(tmp, [])
    archive = tmp / "mirror" / "cuda" / "redist" / "cuda_nvcc" / PLATFORM / f"{TOP}.tar.xz"
    archive.write_bytes(data)
    manifest["cuda_nvcc"][PLATFORM].update(sha256=hashlib.sha256(data).hexdigest(), size=str(len(data)))
    (tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json").write_text(json.dumps(manifest))
    return data


@case
def a_decompression_bomb_stops_at_the_unpacked_cap(tmp):
    bomb_release(tmp, 5, 16 << 20)  # 80 MiB of zeros in a few KiB
    with mirror_server(tmp / "mirror") as (url, _):
        proc = finished(start(["install", "12.4.1", "--mirror", url],
                              env_for(tmp, CUDAENV_MAX_UNPACKED_BYTES=32 << 20)), "a bomb")
        expect_error(proc, 6, f"{TOP}.tar.xz unpacks to more than {32 << 20} bytes")
        check_nothing_of(tmp, "12.4.1")


@case
def an_entry_declaring_more_than_the_default_cap_is_refused_before_it_is_written(tmp):
    # A 2 GiB entry: over the default cap (the archive is small, so 1 GiB) from its header on.
    header = tarfile.TarInfo(f"{TOP}/share/huge.bin")
    header.size = 2 << 30
    data = write_archive(tmp, lzma.compress(header.tobuf(format=tarfile.GNU_FORMAT) + bytes(8 << 20), preset=0))
    with mirror_server(tmp / "mirror") as (url, _):
        proc = finished(start(["install", "12.4.1", "--mirror", url], env_for(tmp)), "a 2 GiB entry")
        expect_error(proc, 6, f"{TOP}.tar.xz unpacks to more than {1 << 30} bytes")
        check_nothing_of(tmp, "12.4.1")
    check(len(data) < 1 << 20, "the archive itself is small")


# 3. Documents that never end.

@case
def a_manifest_that_trickles_forever_fails_at_the_document_deadline(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", NVCC)
    manifest = "/cuda/redist/redistrib_12.4.1.json"
    # 2 KiB a second: above libcurl's low-speed limit, so only an overall deadline ends it.
    with mirror_server(tmp / "mirror", {manifest: {"trickle": 2048}}) as (url, _):
        started = time.monotonic()
        proc = finished(start(["install", "12.4.1", "--mirror", url], env_for(tmp, CUDAENV_DOCUMENT_TIMEOUT=3)),
                        "an install reading a manifest that never ends")
        expect_error(proc, 5, f"{url}{manifest}: no complete answer within 3 s")
        check(time.monotonic() - started < PATIENCE, "ended")
        check_nothing_of(tmp, "12.4.1")


@case
def an_index_that_never_ends_stops_at_the_document_size_cap(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", NVCC)
    with mirror_server(tmp / "mirror", {"/cuda/redist/": {"endless": True}}) as (url, _):
        env = env_for(tmp, CUDAENV_MAX_DOCUMENT_BYTES=1 << 20)
        proc = finished(start(["list-remote", "--mirror", url], env), "list-remote on an endless index")
        expect_error(proc, 6, f"{url}/cuda/redist/: larger than {1 << 20} bytes")
        proc = finished(start(["install", "12.4", "--mirror", url], env), "install on an endless index")
        expect_error(proc, 6, f"{url}/cuda/redist/: larger than {1 << 20} bytes")


# 4. Modes.

@case
def modes_from_the_archive_are_sanitized(tmp):
    release_with(tmp, [("bin/setuid", "#!/bin/sh\n", 0o4755), ("bin/setgid", "#!/bin/sh\n", 0o2755),
                       ("bin/open", "#!/bin/sh\n", 0o777), ("include/open.h", "/* */\n", 0o666),
                       ("lib/private.so", "elf", 0o600),
                       {"path": "share/sticky", "kind": "dir", "mode": 0o1777},
                       {"path": "share/sticky/file", "data": b"x", "mode": 0o4666},
                       ("deep/a/b/c/file.txt", "no directory entries above me", 0o644)])
    with mirror_server(tmp / "mirror") as (url, _):
        # Under umask 0 the directories libarchive makes on its own would be world-writable.
        proc = finished(start(["install", "12.4.1", "--mirror", url], env_for(tmp),
                              preexec_fn=lambda: os.umask(0)), "an install")
        check(proc.returncode == 0, f"installed: {proc.stderr}")
    prefix = tmp / "root" / "toolkits" / "12.4.1"
    # The archives' files are links to the shared unpacked store, whose files are read-only (a
    # change in one prefix would be a change in all): 0o555 and 0o444; directories 0o755.
    expected = {"bin/setuid": 0o555, "bin/setgid": 0o555, "bin/open": 0o555, "include/open.h": 0o444,
                "lib/private.so": 0o444, "share/sticky": 0o755, "share/sticky/file": 0o444,
                "deep": 0o755, "deep/a/b/c": 0o755, "deep/a/b/c/file.txt": 0o444, ".": 0o755,
                "cudaenv-receipt.json": 0o644}
    for path, mode in expected.items():
        actual = stat.S_IMODE((prefix / path).lstat().st_mode) if (prefix / path).exists() else None
        check(actual == mode, f"{path}: {oct(actual) if actual is not None else 'missing'}, expected {oct(mode)}")
    for path in [prefix, *prefix.rglob("*")]:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        check(stat.S_IMODE(st.st_mode) in (0o755, 0o644, 0o555, 0o444),
              f"{path}: {oct(stat.S_IMODE(st.st_mode))}")


# 5. cudaenv's own files cannot be redirected.

@case
def links_named_like_cudaenvs_own_files_are_replaced_not_followed(tmp):
    release_with(tmp, [{"path": "version.json", "kind": "symlink", "target": "bin/nvcc"},
                       {"path": "cudaenv-receipt.json", "kind": "symlink", "target": "bin/nvcc"}])
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
    prefix = tmp / "root" / "toolkits" / "12.4.1"
    for name in ("version.json", "cudaenv-receipt.json"):
        check(not (prefix / name).is_symlink() and (prefix / name).is_file(), f"{name} is a plain file")
    version_json, receipt = (json_of(prefix / name) for name in ("version.json", "cudaenv-receipt.json"))
    check(version_json.get("cuda", {}).get("version") == "12.4.1", f"version.json: {version_json}")
    check(receipt.get("product") == "cuda" and receipt.get("version") == "12.4.1", f"the receipt: {receipt}")
    check_toolkit_runs(tmp, env, "12.4.1", [f"nvcc {NVCC}"])


@case
def a_version_json_link_pointing_outside_is_refused(tmp):
    (tmp / "outside.json").write_text("outside\n")
    release_with(tmp, [{"path": "version.json", "kind": "symlink", "target": "../../../../outside.json"}])
    with mirror_server(tmp / "mirror") as (url, _):
        expect_error(run(["install", "12.4.1", "--mirror", url], env_for(tmp)), 6,
                     f"{TOP}/version.json", "link points outside the install directory")
    check((tmp / "outside.json").read_text() == "outside\n", "the file outside is untouched")
    check_nothing_of(tmp, "12.4.1")


@case
def a_manifest_path_with_percent_encoded_dots_is_refused_before_any_download(tmp):
    """A plain install reads the same path grammar as sync: "%2e%2e" would decode, on the mirror's
    server, to a step out of the redist tree (any file of the mirror host)."""
    manifest = release_with(tmp, [])
    (tmp / "mirror" / "secret.txt").write_text("not an archive\n")
    for path in ("cuda_nvcc/%2e%2e/%2e%2e/secret.txt", "cuda_nvcc/%2E%2E/x.tar.xz", "/etc/passwd"):
        manifest["cuda_nvcc"][PLATFORM]["relative_path"] = path
        (tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json").write_text(json.dumps(manifest))
        with mirror_server(tmp / "mirror") as (url, faults):
            expect_error(run(["install", "12.4.1", "--mirror", url], env_for(tmp)), 6,
                         "cuda_nvcc", "relative_path")
            log = Path(str(faults) + ".log")
            asked = log.read_text() if log.exists() else ""
            check("secret" not in asked and "%2" not in asked.lower() and "passwd" not in asked,
                  f"nothing outside the redist tree is asked for ({path}): {asked!r}")
        check_nothing_of(tmp, "12.4.1")


finish()
