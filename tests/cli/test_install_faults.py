"""`cudaenv install` when the network or the mirror misbehaves: dropped connections (resumed in
the same run and across runs), a wrong byte, a stalled response, a 404, a host that does not
resolve, a mirror without directory index, a kill -9 in the middle, two installs at once."""

import json
import os
import signal
import subprocess
import time

from harness import BINARY, case, check, clean_env, finish, mirror_server, run, expect_error
from synthetic_mirror import PLATFORM, toolkit_release

PADDING = 300_000  # incompressible bytes per padded archive: several 64 KiB chunks on the wire


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    # Retries wait 20 ms instead of half a second, so failing runs stay fast.
    return clean_env(tmp, **{"CUDAENV_ROOT": tmp / "root", "CUDAENV_SYSROOT": tmp / "sysroot",
                             "CUDAENV_HTTP_BACKOFF_MS": 20, **extra})


def requests(faults, path=None):
    """The server's request log: (method, path, range header or "-"), optionally for one path."""
    log = faults.parent / (faults.name + ".log")
    entries = [tuple(line.split(" ", 2)) for line in log.read_text().splitlines()] if log.exists() else []
    return [e for e in entries if path is None or e[1] == path]


def range_start(header):
    return int(header[len("bytes="):].split("-")[0]) if header.startswith("bytes=") else 0


def archive(manifest, name):
    """(URL path on the mirror, cache file name) of a component's archive."""
    relative = manifest[name][PLATFORM]["relative_path"]
    return f"/cuda/redist/{relative}", os.path.basename(relative)


def toolkits(tmp):
    directory = tmp / "root" / "toolkits"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def check_nothing_installed(tmp, version="12.4.1"):
    check(version not in toolkits(tmp), f"no toolkit visible: {toolkits(tmp)}")
    check(not any(n.startswith(".staging-") for n in toolkits(tmp)), f"no staging left: {toolkits(tmp)}")


def wait_for(condition, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@case
def a_dropped_connection_resumes_with_a_range_request(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, _ = archive(manifest, "cuda_nvcc")
    with mirror_server(tmp / "mirror", {nvcc: {"drop_after": 100_000, "times": 1}}) as (url, faults):
        run(["install", "12.4.1", "--mirror", url], env_for(tmp), check_exit=0)
        seen = requests(faults, nvcc)
        check(len(seen) == 2, f"one drop, one resume: {seen}")
        check(seen[0][2] == "-" and 0 < range_start(seen[-1][2]) <= 100_000, f"resumed with Range: {seen}")
        prefix = tmp / "root" / "toolkits" / "12.4.1"
        check((prefix / "share" / "padding.bin").stat().st_size == PADDING, "the whole archive arrived")


@case
def an_interrupted_download_resumes_in_the_next_run(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, nvcc_file = archive(manifest, "cuda_nvcc")
    with mirror_server(tmp / "mirror", {nvcc: {"drop_after": 100_000}}) as (url, faults):
        env = env_for(tmp, CUDAENV_HTTP_ATTEMPTS=3)
        failed = run(["install", "12.4.1", "--mirror", url], env)
        expect_error(failed, 5, url + nvcc)
        check(len(requests(faults, nvcc)) == 3, f"three attempts: {requests(faults, nvcc)}")
        check_nothing_installed(tmp)
        cached = tmp / "root" / "cache" / "downloads" / nvcc_file
        check(cached.stat().st_size == 100_000, f"the partial download is kept: {cached.stat().st_size}")

        faults.write_text("{}")
        before = len(requests(faults, nvcc))
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        resumed = requests(faults, nvcc)[before:]
        check([r[2] for r in resumed] == ["bytes=100000-"], f"resumed from the partial file: {resumed}")
        check((tmp / "root" / "toolkits" / "12.4.1" / "cudaenv-receipt.json").is_file(), "installed")


@case
def a_mirror_that_ignores_range_still_completes_a_partial_download(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, nvcc_file = archive(manifest, "cuda_nvcc")
    with mirror_server(tmp / "mirror", {nvcc: {"drop_after": 100_000}}) as (url, faults):
        env = env_for(tmp, CUDAENV_HTTP_ATTEMPTS=1)
        expect_error(run(["install", "12.4.1", "--mirror", url], env), 5, url + nvcc)
        check((tmp / "root" / "cache" / "downloads" / nvcc_file).stat().st_size == 100_000, "partial file kept")
        # Now the server answers every Range request with the whole file (200).
        faults.write_text(json.dumps({nvcc: {"no_range": True}}))
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        check(requests(faults, nvcc)[-1][2] == "bytes=100000-", f"{requests(faults, nvcc)}")
        check((tmp / "root" / "toolkits" / "12.4.1" / "share" / "padding.bin").stat().st_size == PADDING,
              "the bytes already cached were not written twice")


@case
def a_wrong_byte_fails_the_checksum_and_discards_the_download(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, nvcc_file = archive(manifest, "cuda_nvcc")
    with mirror_server(tmp / "mirror", {nvcc: {"corrupt_at": 500}}) as (url, faults):
        env = env_for(tmp)
        expected = manifest["cuda_nvcc"][PLATFORM]["sha256"]
        line = expect_error(run(["install", "12.4.1", "--mirror", url], env), 6,
                            f"sha256 mismatch for {url}{nvcc}: expected {expected}, got ")
        got = line.rsplit("got ", 1)[-1]
        check(len(got) == 64 and got != expected, f"the hash received: {line}")
        check_nothing_installed(tmp)
        check(not (tmp / "root" / "cache" / "downloads" / nvcc_file).exists(), "the corrupt download is removed")
        faults.write_text("{}")
        before = len(requests(faults, nvcc))
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        check([r[2] for r in requests(faults, nvcc)[before:]] == ["-"], "fetched anew from the start")


@case
def a_manifest_hash_that_does_not_match_the_archive_is_refused(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    manifest["cuda_cudart"][PLATFORM]["sha256"] = "0" * 64
    (tmp / "mirror" / "cuda" / "redist" / "redistrib_12.4.1.json").write_text(json.dumps(manifest))
    cudart, cudart_file = archive(manifest, "cuda_cudart")
    with mirror_server(tmp / "mirror") as (url, _):
        expect_error(run(["install", "12.4.1", "--mirror", url], env_for(tmp)), 6,
                     f"sha256 mismatch for {url}{cudart}: expected {'0' * 64}, got ")
        check_nothing_installed(tmp)
        check(not (tmp / "root" / "cache" / "downloads" / cudart_file).exists(), "the download is removed")


@case
def a_missing_archive_is_a_network_error_naming_its_url(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    cudart, _ = archive(manifest, "cuda_cudart")
    with mirror_server(tmp / "mirror", {cudart: {"status": 404}}) as (url, faults):
        proc = run(["install", "12.4.1", "--mirror", url], env_for(tmp))
        expect_error(proc, 5, f"{url}{cudart}: not found on the mirror (HTTP 404)")
        check(len(requests(faults, cudart)) == 1, "a 404 is not retried")
        check_nothing_installed(tmp)
        check(proc.stdout == "", proc.stdout)


@case
def a_host_that_does_not_resolve_is_a_network_error_with_a_dns_hint(tmp):
    proc = run(["install", "12.4.1", "--mirror", "http://no-such-host.invalid"], env_for(tmp))
    expect_error(proc, 5, "http://no-such-host.invalid/cuda/redist/", "no-such-host.invalid")
    check("hint:" in proc.stderr and "DNS" in proc.stderr, proc.stderr)
    expect_error(run(["list-remote", "--mirror", "http://no-such-host.invalid"], env_for(tmp)), 5,
                 "no-such-host.invalid")
    check_nothing_installed(tmp)


@case
def a_bad_retry_setting_is_a_usage_error_naming_the_variable(tmp):
    for name, value in (("CUDAENV_HTTP_ATTEMPTS", "0"), ("CUDAENV_HTTP_BACKOFF_MS", "soon")):
        proc = run(["install", "12.4.1", "--mirror", "http://no-such-host.invalid"], env_for(tmp, **{name: value}))
        expect_error(proc, 2, f'{name}: "{value}" is not a whole number')
    check_nothing_installed(tmp)


@case
def a_stalled_response_is_retried_after_the_stall_timeout(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, _ = archive(manifest, "cuda_nvcc")
    # The server goes silent for 120 s; a silent connection is dropped after --stall-timeout (1 s).
    stall = {nvcc: {"stall_after": 100_000, "stall_seconds": 120, "times": 1}}
    with mirror_server(tmp / "mirror", stall) as (url, faults):
        started = time.monotonic()
        run(["install", "12.4.1", "--mirror", url, "--stall-timeout", "1"], env_for(tmp), check_exit=0)
        elapsed = time.monotonic() - started
        seen = requests(faults, nvcc)
        check(len(seen) == 2 and range_start(seen[1][2]) > 0, f"retried with Range: {seen}")
        # (long before the server's silence ends; the wide margin absorbs a loaded sanitizer build)
        check(elapsed < 60.0, f"gave up on the silent connection before its silence ended: {elapsed:.1f} s")


@case
def a_mirror_without_directory_index_serves_exact_versions(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror", {"/cuda/redist/": {"status": 404}}) as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        run(["install", "12.4.1"], env, check_exit=0)
        proc = run(["install", "12.4"], env)
        expect_error(proc, 5, f"{url}/cuda/redist/: no directory listing (HTTP 404)")
        check("hint: name an exact CUDA version (such as 12.4.1)" in proc.stderr, proc.stderr)
        expect_error(run(["list-remote"], env), 5, f"{url}/cuda/redist/: no directory listing")
        check(toolkits(tmp) == [".lock-12.4.1", "12.4.1"], f"the exact install stands alone: {toolkits(tmp)}")


@case
def kill_9_in_the_middle_leaves_nothing_visible_and_the_next_run_recovers(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, nvcc_file = archive(manifest, "cuda_nvcc")
    cached = tmp / "root" / "cache" / "downloads" / nvcc_file
    with mirror_server(tmp / "mirror", {nvcc: {"delay": 0.2}}) as (url, faults):
        env = env_for(tmp)
        proc = subprocess.Popen([BINARY, "install", "12.4.1", "--mirror", url], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: cached.exists() and cached.stat().st_size > 0, "the first bytes of the archive")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        partial = cached.stat().st_size
        check(0 < partial < int(manifest["cuda_nvcc"][PLATFORM]["size"]), f"killed mid-download: {partial}")
        check("12.4.1" not in toolkits(tmp), f"no toolkit visible: {toolkits(tmp)}")
        check(any(n.startswith(".staging-12.4.1-") for n in toolkits(tmp)), f"staging left: {toolkits(tmp)}")
        listed = json.loads(run(["list", "--json"], env, check_exit=0).stdout)
        check(listed["installed"] == [], f"list shows nothing: {listed}")

        faults.write_text("{}")
        before = len(requests(faults, nvcc))
        run(["install", "12.4.1", "--mirror", url], env, check_exit=0)
        check(toolkits(tmp) == [".lock-12.4.1", "12.4.1"], f"staging cleared: {toolkits(tmp)}")
        check((tmp / "root" / "toolkits" / "12.4.1" / "cudaenv-receipt.json").is_file(), "receipt present")
        check([range_start(r[2]) for r in requests(faults, nvcc)[before:]] == [partial],
              f"resumed from the {partial} bytes cached: {requests(faults, nvcc)[before:]}")


@case
def two_installs_of_one_version_at_once_give_one_toolkit(tmp):
    manifest = toolkit_release(tmp / "mirror", "12.4.1", "12.4.131", padding=PADDING)
    nvcc, _ = archive(manifest, "cuda_nvcc")
    with mirror_server(tmp / "mirror", {nvcc: {"delay": 0.2}}) as (url, faults):
        env = env_for(tmp)
        command = [BINARY, "install", "12.4.1", "--mirror", url]
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: requests(faults, nvcc), "the first install to fetch")
        second = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        outputs = [p.communicate(timeout=60) for p in (first, second)]
        check([p.returncode for p in (first, second)] == [0, 0], f"both succeed: {outputs}")
        check(outputs[0][0].startswith("installed CUDA 12.4.1"), f"the first installs: {outputs[0]}")
        # The second started while the first held the lock (normally it waits for it; on a slow
        # machine the first may have finished already): either way it finds the toolkit there.
        check("already installed" in outputs[1][0], f"the second finds it installed: {outputs[1]}")
        check(outputs[1][1] in ("", "waiting for another cudaenv install of the same version to finish...\n"),
              f"the second says it waits, or nothing: {outputs[1]}")
        check(toolkits(tmp) == [".lock-12.4.1", "12.4.1"], f"one toolkit: {toolkits(tmp)}")
        check(len(requests(faults, nvcc)) == 1, f"downloaded once: {requests(faults, nvcc)}")


finish()
