"""`cudaenv install` under faults and attack: a write that fails mid-extraction (file size limit,
a full disk), a mirror that sends more than its manifest promises or an archive that unpacks
without end, documents that trickle or never end, modes an archive asks for, links an archive
plants under the names of cudaenv's own files, a kill at any instant of `install --force`, and
Ctrl-C/SIGTERM in the middle."""

import hashlib
import io
import json
import lzma
import os
import resource
import shutil
import signal
import stat
import subprocess
import tarfile
import time

from harness import BINARY, case as run_case, check, clean_env, expect_error, finish, mirror_server, run
from synthetic_mirror import PLATFORM, toolkit_release, write_release

NVCC = "12.4.131"
TOP = f"cuda_nvcc-{PLATFORM}-{NVCC}-archive"
ARCHIVE_PATH = f"/cuda/redist/cuda_nvcc/{PLATFORM}/{TOP}.tar.xz"
PATIENCE = 45  # seconds: generous; a hang would be forever


def case(function):
    """Runs the case, unless CUDAENV_TEST_ONLY names others (a part of their names)."""
    only = os.environ.get("CUDAENV_TEST_ONLY", "")
    return run_case(function) if only in function.__name__ else function


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, **{"CUDAENV_ROOT": tmp / "root", "CUDAENV_SYSROOT": tmp / "sysroot",
                             "CUDAENV_HTTP_BACKOFF_MS": 20, **extra})


def start(args, env, **popen):
    return subprocess.Popen([BINARY, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)


def finished(proc, what):
    """Waits for `proc` (at most PATIENCE seconds: a hang fails the test instead of blocking it)."""
    try:
        proc.stdout_text, proc.stderr = proc.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"{what} did not end within {PATIENCE} s")
    return proc


def release_with(tmp, entries, version="12.4.1"):
    """A release whose nvcc archive carries a working nvcc plus `entries`."""
    return write_release(tmp / "mirror", version, {
        "cuda_nvcc": (NVCC, [("bin/nvcc", "#!/bin/sh\necho nvcc " + NVCC + "\n", 0o755), *entries], 0),
        "cuda_cudart": ("12.4.127", [("lib/libcudart.so.12", "elf", 0o644)], 0),
    })


def toolkit_names(tmp):
    directory = tmp / "root" / "toolkits"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def check_nothing_of(tmp, version):
    names = toolkit_names(tmp)
    check(version not in names, f"no {version} visible: {names}")
    check(not any(n.startswith((".staging-", ".replaced-", ".old-")) for n in names), f"nothing left aside: {names}")


def check_toolkit_runs(tmp, env, version, nvcc_versions):
    listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)
    versions = [t["version"] for t in listed["installed"]]
    check(version in versions, f"cudaenv list shows {version}: {listed}")
    nvcc = tmp / "root" / "toolkits" / version / "bin" / "nvcc"
    try:
        out = subprocess.run([str(nvcc)], capture_output=True, text=True, timeout=PATIENCE).stdout
    except OSError as error:  # missing, or no longer a program
        out = str(error)
    check(any(v in out for v in nvcc_versions), f"{version}'s nvcc runs: {out!r}")


def json_of(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def requests(faults, path):
    log = faults.parent / (faults.name + ".log")
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 2)[2] for line in lines if line.split(" ", 2)[1] == path]


# 1. A write that fails mid-extraction.

# A file that compresses to a few KiB but cannot be written under 1 MiB (not zeros: libarchive
# would leave holes for those, which take no space).
ZEROS = 4 << 20


def file_size_limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec: writes fail with EFBIG


@case
def a_write_failure_during_extraction_fails_the_install_and_leaves_nothing(tmp):
    toolkit_release(tmp / "mirror", "12.1.1", "12.1.105")
    release_with(tmp, [("share/zeros.bin", b"cuda" * (ZEROS // 4), 0o644)])
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.1.1", "--mirror", url], env, check_exit=0)
        proc = finished(start(["install", "12.4.1", "--mirror", url], env, preexec_fn=file_size_limit),
                        "an install whose writes fail")
        expect_error(proc, 1, "share/zeros.bin", "File too large")
        check_nothing_of(tmp, "12.4.1")
        check_toolkit_runs(tmp, env, "12.1.1", ["V12.1.105"])


@case
def a_full_disk_during_extraction_fails_the_install_and_leaves_nothing(tmp):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skipped: a real full disk needs root and unshare (tmpfs in a mount namespace)")
        return
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=1m none {tmp}"],
                           capture_output=True)
    if probe.returncode != 0:
        print("skipped: mount -t tmpfs in a mount namespace does not work here")
        return
    toolkit_release(tmp / "mirror", "12.1.1", "12.1.105")
    release_with(tmp, [("share/zeros.bin", b"cuda" * (ZEROS // 4), 0o644)])
    (tmp / "root").mkdir()
    (tmp / "out").mkdir()
    with mirror_server(tmp / "mirror") as (url, _):
        # The data root is a 2 MiB tmpfs that exists only in this namespace: every step runs there.
        script = (f'mount -t tmpfs -o size=2m none "{tmp}/root" || exit 99\n'
                  f'"{BINARY}" install 12.1.1 --mirror {url} >/dev/null 2>&1 || exit 98\n'
                  f'"{BINARY}" install 12.4.1 --mirror {url} 2>"{tmp}/out/err"; echo $? >"{tmp}/out/rc"\n'
                  f'ls -a "{tmp}/root/toolkits" >"{tmp}/out/names"\n'
                  f'"{tmp}/root/toolkits/12.1.1/bin/nvcc" >"{tmp}/out/nvcc"\n')
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env_for(tmp), capture_output=True,
                              text=True, timeout=PATIENCE)
    check(proc.returncode == 0, f"the namespace script ran: {proc.returncode} {proc.stderr}")
    rc = int((tmp / "out" / "rc").read_text())
    err = (tmp / "out" / "err").read_text()
    check(rc == 1, f"exit {rc}: {err}")
    errors = [line for line in err.splitlines() if line.startswith("cudaenv: error:")]
    check(len(errors) == 1 and "No space left on device" in errors[0], f"names the reason: {err!r}")
    names = (tmp / "out" / "names").read_text().split()
    check(sorted(names) == [".", "..", ".lock-12.1.1", ".lock-12.4.1", "12.1.1"], f"only 12.1.1: {names}")
    check("V12.1.105" in (tmp / "out" / "nvcc").read_text(), "the earlier toolkit still runs")


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
    expected = {"bin/setuid": 0o755, "bin/setgid": 0o755, "bin/open": 0o755, "include/open.h": 0o644,
                "lib/private.so": 0o644, "share/sticky": 0o755, "share/sticky/file": 0o644,
                "deep": 0o755, "deep/a/b/c": 0o755, "deep/a/b/c/file.txt": 0o644, ".": 0o755}
    for path, mode in expected.items():
        actual = stat.S_IMODE((prefix / path).lstat().st_mode) if (prefix / path).exists() else None
        check(actual == mode, f"{path}: {oct(actual) if actual is not None else 'missing'}, expected {oct(mode)}")
    for path in [prefix, *prefix.rglob("*")]:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        check(stat.S_IMODE(st.st_mode) in (0o755, 0o644), f"{path}: {oct(stat.S_IMODE(st.st_mode))}")


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


# 6. `install --force` keeps a toolkit in place at every instant.

def rename_pauses(log):
    """Lines of the strace log for rename calls held back by the injected delay."""
    return [line for line in (log.read_text().splitlines() if log.exists() else []) if "(DELAYED)" in line]


def traced_force_install(tmp, url, env, kill_at_pause):
    """`install --force` under strace, each rename held back 3 s; kill -9 at the given pause."""
    log = tmp / f"strace-{kill_at_pause}.log"
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", str(log), "-e", "trace=rename,renameat,renameat2",
                               "-e", "inject=rename,renameat,renameat2:delay_exit=3000000",
                               BINARY, "install", "12.4.1", "--force", "--mirror", url],
                              env={**env, "ASAN_OPTIONS": "detect_leaks=0"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + PATIENCE
    while len(rename_pauses(log)) < kill_at_pause and tracer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    pauses = rename_pauses(log)
    if len(pauses) >= kill_at_pause:
        os.kill(int(pauses[kill_at_pause - 1].split()[0]), signal.SIGKILL)
    tracer.wait(timeout=PATIENCE)
    return pauses[:kill_at_pause]


@case
def a_kill_at_any_instant_of_a_forced_reinstall_leaves_a_working_toolkit(tmp):
    if not shutil.which("strace") or subprocess.run(["strace", "-o", "/dev/null", "true"]).returncode != 0:
        print("skipped: strace (to hold the install at its renames) is not usable here")
        return
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        toolkit_release(tmp / "mirror", "12.4.1", "12.4.132")  # the mirror republished the release
        for moment in (1, 2):  # the first and the second rename of the reinstall
            paused = traced_force_install(tmp, url, env, moment)
            check(len(paused) == moment, f"killed at rename {moment}: {paused}")
            check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131", "V12.4.132"])
        # Killed mid-download: the toolkit in place stays.
        shutil.rmtree(tmp / "root" / "cache" / "downloads")
        with mirror_server(tmp / "mirror", {ARCHIVE_PATH.replace("12.4.131", "12.4.132"): {"delay": 1}}) as (slow, _):
            proc = start(["install", "12.4.1", "--force", "--mirror", slow], env)
            deadline = time.monotonic() + PATIENCE
            while f".staging-12.4.1-{proc.pid}" not in toolkit_names(tmp) and time.monotonic() < deadline:
                time.sleep(0.01)
            proc.kill()
            proc.communicate()
            check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131", "V12.4.132"])
        run(["install", "12.4.1", "--force", "--mirror", url], env, check_exit=0)
        check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.132"])
        check(toolkit_names(tmp) == [".lock-12.4.1", "12.4.1"], f"nothing left aside: {toolkit_names(tmp)}")


@case
def a_failed_swap_keeps_the_old_toolkit(tmp):
    if not shutil.which("strace") or subprocess.run(["strace", "-o", "/dev/null", "true"]).returncode != 0:
        print("skipped: strace (to make the swap fail) is not usable here")
        return
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = env_for(tmp)
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        toolkit_release(tmp / "mirror", "12.4.1", "12.4.132")
        # No exchange in one step (as on a filesystem without RENAME_EXCHANGE), and the second
        # rename fails: the one that moves the new prefix in after the old one stepped aside.
        proc = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2",
                               "-e", "inject=renameat2:error=ENOSYS", "-e", "inject=rename:error=EIO:when=2",
                               BINARY, "install", "12.4.1", "--force", "--mirror", url],
                              env={**env, "ASAN_OPTIONS": "detect_leaks=0"}, capture_output=True, text=True,
                              timeout=PATIENCE)
        expect_error(proc, 1, "cannot replace", "toolkits/12.4.1", "Input/output error")
        check_toolkit_runs(tmp, env, "12.4.1", ["V12.4.131"])
        check(toolkit_names(tmp) == [".lock-12.4.1", "12.4.1"], f"nothing left aside: {toolkit_names(tmp)}")


# 7. Ctrl-C and SIGTERM.

def interrupted_install(tmp, signum, code, name):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", NVCC, padding=300_000)
    nvcc = f"/cuda/redist/{manifest['cuda_nvcc'][PLATFORM]['relative_path']}"
    cached = tmp / "root" / "cache" / "downloads" / os.path.basename(nvcc)
    env = env_for(tmp)
    with mirror_server(tmp / "mirror", {nvcc: {"delay": 0.3}}) as (url, faults):
        proc = start(["install", "12.4.1", "--mirror", url], env)
        deadline = time.monotonic() + PATIENCE
        while not (cached.exists() and cached.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signum)
        finished(proc, f"an install after {name}")
        check(proc.returncode == code, f"exit {proc.returncode}, expected {code}: {proc.stderr}")
        check(f"interrupted by {name}" in proc.stderr, proc.stderr)
        check(toolkit_names(tmp) == [".lock-12.4.1"], f"staging removed: {toolkit_names(tmp)}")
        partial = cached.stat().st_size
        check(partial > 0, "the bytes downloaded are kept")
        faults.write_text("{}")
        before = len(requests(faults, nvcc))
        rerun = finished(start(["install", "12.4.1", "--mirror", url], env), "the rerun")
        check(rerun.returncode == 0 and "waiting" not in rerun.stderr, f"the lock was released: {rerun.stderr}")
        check(requests(faults, nvcc)[before:] == [f"bytes={partial}-"],
              f"resumed from byte {partial}: {requests(faults, nvcc)[before:]}")
        check_toolkit_runs(tmp, env, "12.4.1", [f"V{NVCC}"])


@case
def ctrl_c_removes_the_staging_directory_and_exits_130(tmp):
    interrupted_install(tmp, signal.SIGINT, 130, "SIGINT")


@case
def sigterm_removes_the_staging_directory_and_exits_143(tmp):
    interrupted_install(tmp, signal.SIGTERM, 143, "SIGTERM")


finish()
