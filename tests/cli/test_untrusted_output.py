"""Text that cudaenv prints from files and the network (a .cudaenv's values and keys, a mirror's
manifest, a receipt) reaches the terminal with its control characters escaped and long values
cut: no escape sequence (ESC, BEL, CSI) from a cloned repository or a mirror can retitle the
window, clear the screen or forge output. JSON output stays valid JSON carrying the exact text."""

import json
import subprocess
from pathlib import Path

from harness import BINARY, case, check, clean_env, finish, install_synthetic_toolkits, mirror_server

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"
CONTROL_BYTES = (b"\x1b", b"\x07", b"\x9b")


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, timeout=60)


def assert_escaped(proc, what, shown=b"\\x1b"):
    """Neither stream holds a raw control byte, and the escaped form is shown instead."""
    for stream_name, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        for byte in CONTROL_BYTES:
            check(byte not in data, f"{what}: raw {byte!r} reached {stream_name}: {data[:400]!r}")
    check(shown in proc.stdout + proc.stderr, f"{what}: escaped form {shown!r} not shown: {proc.stderr[:400]!r}")


def toml_escaped(text):
    """TOML basic-string escapes: the parsed value then holds the raw control characters."""
    return "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 else c for c in text)


@case
def a_hostile_cuda_value_is_shown_escaped_by_every_command(tmp):
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text(f'cuda = "{toml_escaped(HOSTILE)}"\n')
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    for args in (["current"], ["env", "--shell", "bash"], ["exec", "--", "true"], ["which", "nvcc"],
                 ["hook-env", "--shell", "bash"]):
        proc = cudaenv(args, env, project)
        # A .cudaenv holding a bad value is a usage error (exit 2); the hook only reports it.
        check(args == ["hook-env", "--shell", "bash"] or proc.returncode == 2,
              f"{args}: exit {proc.returncode}")
        assert_escaped(proc, f"cudaenv {' '.join(args)}")
    # The file written raw (a bare version line): the same.
    (project / ".cudaenv").write_bytes(HOSTILE.encode() + b"\n")
    assert_escaped(cudaenv(["current"], env, project), "a raw bare-version .cudaenv")


@case
def a_hostile_key_name_is_shown_escaped(tmp):
    project = tmp / "repo"
    project.mkdir()
    key = "\x1b[31mtorch\u009b1;1H"  # the last one a C1 CSI, encoded as UTF-8
    (project / ".cudaenv").write_text(f'cuda = "12.1"\n[frameworks]\n"{toml_escaped(key)}" = "bogus spec"\n')
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 2, f"exit {proc.returncode}: {proc.stderr!r}")
    check(b"\xc2\x9b" not in proc.stderr, f"the C1 CSI reached the terminal: {proc.stderr!r}")
    assert_escaped(proc, "a key name with escapes")
    check(b"\\xc2\\x9b" in proc.stderr, f"the C1 control is shown escaped: {proc.stderr!r}")


@case
def a_huge_value_is_cut(tmp):
    project = tmp / "repo"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "' + "A" * 60000 + '"\n')
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    proc = cudaenv(["current"], env, project)
    check(proc.returncode == 2, f"exit {proc.returncode}")
    check(len(proc.stderr) < 4096, f"a 60 KB value printed in full: {len(proc.stderr)} bytes of stderr")
    check(b"A" * 100 in proc.stderr, f"the start of the value is still shown: {proc.stderr[:300]!r}")


def hostile_manifest(mirror, version, relative_path):
    """A mirror whose redist manifest names a component with escape sequences in its name, version
    and path (the archive itself is missing: the mirror answers 404 for it)."""
    redist = mirror / "cuda" / "redist"
    redist.mkdir(parents=True, exist_ok=True)
    manifest = {
        "release_date": "2025-01-01", "release_label": version, "release_product": "cuda",
        "cuda_nvcc": {"name": "NVCC" + HOSTILE, "license": "CUDA Toolkit", "version": "12.4.131" + HOSTILE,
                      "linux-x86_64": {"relative_path": relative_path, "sha256": "0" * 64, "md5": "0" * 32,
                                       "size": "1234"}},
        "cuda_cudart" + HOSTILE: {"name": "CUDART", "license": "CUDA Toolkit", "version": "12.4.127",
                                  "linux-x86_64": {"relative_path": "cuda_cudart/x" + HOSTILE + ".tar.xz",
                                                   "sha256": "0" * 64, "md5": "0" * 32, "size": "1234"}},
    }
    (redist / f"redistrib_{version}.json").write_text(json.dumps(manifest))


@case
def a_hostile_mirror_is_shown_escaped_and_cut(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_HTTP_ATTEMPTS=1)
    hostile_manifest(tmp / "mirror", "12.4.1", "cuda_nvcc/nvcc" + HOSTILE + ".tar.xz")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["install", "12.4.1", "--mirror", url, "--components", "cuda_nvcc,cuda_cudart" + HOSTILE],
                       env, tmp)
        check(proc.returncode != 0, f"install from a manifest without archives succeeded: {proc.stderr!r}")
        assert_escaped(proc, "install from a hostile mirror")
        proc = cudaenv(["list-remote", "--mirror", url], env, tmp)
        for byte in CONTROL_BYTES:
            check(byte not in proc.stdout + proc.stderr, f"list-remote: raw {byte!r}: {proc.stderr[:300]!r}")
    hostile_manifest(tmp / "mirror", "12.4.1", "cuda_nvcc/" + "B" * 100000 + HOSTILE + ".tar.xz")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["install", "12.4.1", "--mirror", url, "--components", "cuda_nvcc"], env, tmp)
        check(proc.returncode != 0, "install from a manifest without archives succeeded")
        check(len(proc.stderr) < 8192, f"a 100 KB path printed in full: {len(proc.stderr)} bytes of stderr")
        for byte in CONTROL_BYTES:
            check(byte not in proc.stderr, f"install (100 KB path): raw {byte!r}")


@case
def a_hostile_receipt_is_shown_escaped_and_json_stays_json(tmp):
    from synthetic_mirror import cudnn_release
    env = install_synthetic_toolkits(tmp, releases={"12.4.1": "12.4.131"})
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], env, tmp)
        check(proc.returncode == 0, f"cuDNN install: {proc.stderr!r}")
    receipts = list(Path(tmp / "root" / "cudnn").glob("*/cudaenv-receipt.json"))
    check(len(receipts) == 1, f"one cuDNN receipt: {receipts}")
    for receipt in receipts:
        data = json.loads(receipt.read_text())
        data["variant"] = "cuda12" + HOSTILE
        data["mirror"] = url + HOSTILE
        receipt.write_text(json.dumps(data))
    proc = cudaenv(["list"], env, tmp)
    check(proc.returncode == 0, f"list: {proc.stderr!r}")
    assert_escaped(proc, "list with a hostile receipt")
    proc = cudaenv(["list", "--json"], env, tmp)
    for byte in CONTROL_BYTES:
        check(byte not in proc.stdout, f"list --json: raw {byte!r}")
    listed = json.loads(proc.stdout)
    variants = [item["variant"] for item in listed["cudnn"]]
    check(variants == ["cuda12" + HOSTILE], f"list --json carries the exact text, JSON-escaped: {variants}")


finish()
