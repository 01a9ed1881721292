"""`cudaenv install` against archives, manifests and package indexes built to exhaust it: a path
thousands of directories deep under a 1 GiB memory limit, archives whose entries do not fit each
other (a file below a file or a link, a name longer than NAME_MAX, a file and a directory of one
name), sizes that are negative, fractional, strings or absurd, downloads of unknown size, and
index pages nested without end or made to be scanned again for every anchor. Each must end
quickly with a clear error and its documented exit code, and install nothing."""

import hashlib
import io
import json
import lzma
import mmap
import os
import resource
import subprocess
import tarfile
import time

from harness import BINARY, check, expect_error, finish, mirror_server
from install_helpers import (PATIENCE, TOP, case, check_nothing_of, env_for, finished, release_with,
                             start)
from synthetic_mirror import PLATFORM, write_release
from synthetic_wheels import cuda13_release
from framework_wheels import framework_index

ARCHIVE = f"{TOP}.tar.xz"
MEMORY_LIMIT_MB = 1024
MANIFEST = "/cuda/redist/redistrib_12.4.1.json"


def sanitized():
    """AddressSanitizer reserves terabytes of address space, so RLIMIT_AS cannot bound a
    sanitized binary; its own hard_rss_limit_mb can."""
    with open(BINARY, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as image:
        return image.find(b"__asan_init") >= 0


SANITIZED = sanitized()


def start_within_memory(args, env):
    """Starts cudaenv with at most MEMORY_LIMIT_MB of memory."""
    if SANITIZED:
        options = ":".join(filter(None, [env.get("ASAN_OPTIONS"), f"hard_rss_limit_mb={MEMORY_LIMIT_MB}"]))
        return start(args, {**env, "ASAN_OPTIONS": options})
    limit = MEMORY_LIMIT_MB << 20
    return start(args, env, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))


def replace_nvcc_archive(tmp, data):
    """Release 12.4.1 with `data` as its nvcc archive (the manifest's sha256 and size to match)."""
    manifest = release_with(tmp, [])
    archive = tmp / "mirror" / "cuda" / "redist" / "cuda_nvcc" / PLATFORM / ARCHIVE
    archive.write_bytes(data)
    manifest["cuda_nvcc"][PLATFORM].update(sha256=hashlib.sha256(data).hexdigest(), size=str(len(data)))
    (tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json").write_text(json.dumps(manifest))


def deep_archive(depth):
    """A .tar.xz of the top directory and one file `depth` directories below it."""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.PAX_FORMAT) as tar:
        top = tarfile.TarInfo(TOP)
        top.type, top.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(top)
        deep = tarfile.TarInfo(f"{TOP}/" + "d/" * depth + "f")
        deep.size = 1
        tar.addfile(deep, io.BytesIO(b"x"))
    return lzma.compress(tar_bytes.getvalue())


def install(tmp, url, *extra, env=None):
    proc = start_within_memory(["install", "12.4.1", "--mirror", url, *extra], env or env_for(tmp))
    return finished(proc, "an install")


# 1. A tree of bounded depth, built in memory linear in it.

@case
def a_path_eight_thousand_directories_deep_is_refused_at_once_within_1_gib(tmp):
    data = deep_archive(8000)
    check(len(data) < 1024, f"the archive is tiny: {len(data)} bytes")
    replace_nvcc_archive(tmp, data)
    try:
        with mirror_server(tmp / "mirror") as (url, _):
            started = time.monotonic()
            proc = install(tmp, url)
            took = time.monotonic() - started
        expect_error(proc, 6, f"corrupt or hostile archive: {ARCHIVE}: {TOP}/d/d/d/", "path longer than 1024 bytes")
        check(took < PATIENCE / 2, f"refused quickly: {took:.1f} s")
        check_nothing_of(tmp, "12.4.1")
    finally:
        # A tree 8000 deep (the old behaviour) is more than Python's recursive rmtree can remove.
        subprocess.run(["rm", "-rf", str(tmp / "root")], check=False)


@case
def a_path_deeper_than_64_names_is_refused(tmp):
    replace_nvcc_archive(tmp, deep_archive(100))
    with mirror_server(tmp / "mirror") as (url, _):
        proc = install(tmp, url)
    expect_error(proc, 6, f"corrupt or hostile archive: {ARCHIVE}: {TOP}/d/d/",
                 "101 names deep, more than the 64 an archive may nest")
    check_nothing_of(tmp, "12.4.1")


# 2. Entries that do not fit each other: archive damage (exit 6), never "free disk space".

DAMAGE = {
    "a_file_below_a_regular_file": (
        [("lib/stubs", "x", 0o644), ("lib/stubs/libx.so", "y", 0o644)],
        "lib/stubs/libx.so", "below the regular file lib/stubs of the same archive"),
    "a_file_below_a_symlink": (
        [{"path": "share/real", "kind": "dir", "mode": 0o755},
         {"path": "share/link", "kind": "symlink", "target": "real"}, ("share/link/x.h", "y", 0o644)],
        "share/link/x.h", "below the symbolic link share/link of the same archive"),
    "a_name_longer_than_name_max": (
        [("include/" + "n" * 300, "x", 0o644)],
        "include/" + "n" * 300, "a name longer than 255 bytes"),
    "a_file_in_place_of_a_directory": (
        [{"path": "share/d", "kind": "dir", "mode": 0o755}, ("share/d/in", "x", 0o644), ("share/d", "y", 0o644)],
        "share/d", "a file or link where the archive has a directory of the same name"),
    "a_directory_in_place_of_a_file": (
        [("share/f", "x", 0o644), {"path": "share/f", "kind": "dir", "mode": 0o755}],
        "share/f/", "a directory where the archive has a file or link of the same name"),
}


def damage_case(name, entries, entry, why):
    def test(tmp):
        release_with(tmp, entries)
        with mirror_server(tmp / "mirror") as (url, _):
            proc = install(tmp, url)
        expect_error(proc, 6, f"corrupt or hostile archive: {ARCHIVE}: {TOP}/{entry}: {why}")
        check("free space" not in proc.stderr, f"no advice to free disk space: {proc.stderr!r}")
        check_nothing_of(tmp, "12.4.1")
    test.__name__ = name
    case(test)


for _name, (_entries, _entry, _why) in DAMAGE.items():
    damage_case(_name, _entries, _entry, _why)


@case
def an_archive_that_does_not_fit_another_archive_of_the_install_is_damage(tmp):
    # nvcc's archive has a file include/crt, cudart's a directory of that name: whichever comes
    # second meets ENOTDIR or ENOTEMPTY from the system, the archive's fault either way.
    write_release(tmp / "mirror", "12.4.1", {
        "cuda_nvcc": ("12.4.131", [("bin/nvcc", "#!/bin/sh\n", 0o755), ("include/crt", "not a directory", 0o644)], 0),
        "cuda_cudart": ("12.4.127", [("include/crt/host_config.h", "/* */\n", 0o644)], 0),
    })
    with mirror_server(tmp / "mirror") as (url, _):
        proc = install(tmp, url, "--jobs", "1")
    line = expect_error(proc, 6, "corrupt or hostile archive: ", "-archive/include/crt")
    check("free space" not in proc.stderr, f"no advice to free disk space: {line!r} {proc.stderr!r}")
    check_nothing_of(tmp, "12.4.1")


# 3. Sizes from a manifest or an index.

@case
def a_manifest_size_that_is_not_a_whole_number_of_bytes_up_to_64_gib_is_refused(tmp):
    # 64 GiB + 1 was taken as it stood: the download then ended short of it and still installed.
    for size in ("68719476737", "-5", "1.5", 1.5, -5, 1e30, "12 ", "0x10"):
        manifest = release_with(tmp, [])
        manifest["cuda_nvcc"][PLATFORM]["size"] = size
        (tmp / "mirror" / MANIFEST.lstrip("/")).write_text(json.dumps(manifest))
        shown = size if isinstance(size, str) else json.dumps(size)
        with mirror_server(tmp / "mirror") as (url, _):
            proc = install(tmp, url)
        expect_error(proc, 6, f"{url}{MANIFEST}: cuda_nvcc.{PLATFORM}: size: ",
                     f'"{shown}" is not a size in bytes')
        check_nothing_of(tmp, "12.4.1")


def index_env(tmp, **extra):
    return env_for(tmp, CUDAENV_HTTP_ATTEMPTS=2, **extra)


def install_from_index(tmp, index, env=None):
    proc = start_within_memory(["install", "13.0.2", "--source", "pypi", "--index-url", index],
                               env or index_env(tmp))
    return finished(proc, "an install from a package index")


NVCC_WHEEL = "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"


@case
def an_index_size_that_is_negative_fractional_a_string_or_absurd_is_refused(tmp):
    # Such a size was ignored, and the download taken as one of unknown size.
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    check((wheels / NVCC_WHEEL).is_file(), f"{NVCC_WHEEL} was written")
    for size, what in ((-5, '"-5" is not a size in bytes'), (1.5, '"1.5" is not a size in bytes'),
                       (2 ** 70, "is not a size in bytes"), (68719476737, '"68719476737" is not a size in bytes'),
                       ("2364", "a string, not a whole number of bytes")):
        with framework_index(wheels, {"sizes": {NVCC_WHEEL: size}}) as (base, _):
            proc = install_from_index(tmp, f"{base}/simple")
            expect_error(proc, 6, f"{base}/simple/nvidia-cuda-nvcc/: files[0].size: ", what)
        check_nothing_of(tmp, "13.0.2")


@case
def a_download_of_unknown_size_stops_at_the_ceiling(tmp):
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    ceiling = 300
    check((wheels / NVCC_WHEEL).stat().st_size > ceiling, "the wheels are larger than the ceiling")
    env = index_env(tmp, CUDAENV_MAX_DOWNLOAD_BYTES=ceiling)
    # PEP 503 pages give no sizes: the ceiling bounds the download.
    with framework_index(wheels, {"format": "html"}) as (base, _):
        proc = install_from_index(tmp, f"{base}/simple", env)
        expect_error(proc, 6, f"{base}/files/", f": larger than {ceiling} bytes, the most a download of unknown "
                     "size may be (CUDAENV_MAX_DOWNLOAD_BYTES)")
    check_nothing_of(tmp, "13.0.2")
    # A PEP 691 page announcing more than the ceiling fails before the download.
    with framework_index(wheels) as (base, _):
        proc = install_from_index(tmp, f"{base}/simple", env)
        expect_error(proc, 6, f"{base}/files/", f"bytes, more than the {ceiling} a download may be")
    check_nothing_of(tmp, "13.0.2")


# 4. Hostile index pages: parsed in one pass, within a small multiple of their size.

@case
def an_index_page_nested_without_end_is_refused_within_1_gib(tmp):
    # 16 MiB of "[": a document tree of it took well over 1 GiB.
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    page = tmp / "nested.json"
    page.write_bytes(b'{"files": [' + b"[" * (16 << 20))
    with framework_index(wheels, {"pages": {"/simple/cuda-toolkit/": str(page)}}) as (base, _):
        proc = install_from_index(tmp, f"{base}/simple")
        expect_error(proc, 6, f"{base}/simple/cuda-toolkit/: not a PEP 691 project page (nested deeper than 16 levels)")
    check_nothing_of(tmp, "13.0.2")


@case
def an_index_page_of_unclosed_anchors_is_read_in_one_pass(tmp):
    # Each of 1.5 million "<a " once scanned (and copied) the rest of the page: hours of work.
    wheels = tmp / "wheels"
    cuda13_release(wheels)
    page = tmp / "anchors.html"
    page.write_bytes(b"<a " * 1500000 + b">x</a>")
    with framework_index(wheels, {"pages": {"/simple/cuda-toolkit/": str(page)}}) as (base, _):
        started = time.monotonic()
        proc = install_from_index(tmp, f"{base}/simple")
        took = time.monotonic() - started
    expect_error(proc, 3, "no cuda-toolkit release matching")
    check(took < PATIENCE / 2, f"read quickly: {took:.1f} s")
    check_nothing_of(tmp, "13.0.2")


finish()
