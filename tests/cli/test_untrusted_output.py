"""Text that cudaenv prints from files and the network (a .cudaenv's values and keys, a mirror's
manifest, a receipt, a copy of the compatibility database, a GPU's name, a compiler's error, a
path from the environment) reaches the terminal with its control characters escaped and long
values cut: no escape sequence (ESC, BEL, CSI, a bare carriage return) from a cloned repository,
a mirror, the machine or a child process can retitle the window, clear the screen or forge
output. JSON output stays valid JSON carrying the exact text."""

import json
import re
import shutil
import subprocess
from pathlib import Path

from harness import (DEBIAN_PATH, BINARY, FAKE_DRIVER, FIXTURES, case, check, clean_env, finish, fixture_machine,
                     install_synthetic_toolkits, mirror_server)
from synthetic_mirror import toolkit_release

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"
CONTROL_BYTES = (b"\x1b", b"\x07", b"\x9b")
# What a child process or the machine may print: a window title, a screen clear, a bare carriage
# return that would let the rest of a line overwrite its start.
PLANTED = "\x1b]0;pwn\x07\x1b[2J\rFORGED"


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, timeout=60)


def assert_escaped(proc, what, shown=b"\\x1b"):
    """Neither stream holds a raw control byte, and the escaped form is shown instead."""
    for stream_name, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        for byte in CONTROL_BYTES:
            check(byte not in data, f"{what}: raw {byte!r} reached {stream_name}: {data[:400]!r}")
    check(shown in proc.stdout + proc.stderr, f"{what}: escaped form {shown!r} not shown: {proc.stderr[:400]!r}")


def assert_planted_escaped(proc, what):
    """No byte of PLANTED reaches either stream raw (the carriage return included); its escaped
    form is shown."""
    for stream_name, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        for byte in (*CONTROL_BYTES, b"\r"):
            check(byte not in data, f"{what}: raw {byte!r} reached {stream_name}: {data[:600]!r}")
    check(b"\\x1b]0;pwn\\x07\\x1b[2J\\rFORGED" in proc.stdout + proc.stderr,
          f"{what}: the escaped form is shown: {(proc.stdout + proc.stderr)[:600]!r}")


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
    receipt = receipts[0]
    original = receipt.read_text()
    # Text only ever shown (the mirror, the install time): listed, escaped.
    data = json.loads(original)
    data["mirror"] = url + HOSTILE
    data["installed_at"] = "2026-12-02T00:00:00Z" + HOSTILE
    receipt.write_text(json.dumps(data))
    proc = cudaenv(["list"], env, tmp)
    check(proc.returncode == 0, f"list: {proc.stderr!r}")
    for byte in CONTROL_BYTES:
        check(byte not in proc.stdout + proc.stderr, f"list: raw {byte!r}")
    proc = cudaenv(["list", "--json"], env, tmp)
    for byte in CONTROL_BYTES:
        check(byte not in proc.stdout, f"list --json: raw {byte!r}")
    listed = json.loads(proc.stdout)
    mirrors = [item["mirror"] for item in listed["cudnn"]]
    check(mirrors == [url + HOSTILE], f"list --json carries the exact text, JSON-escaped: {mirrors}")
    # A field other code reads as a name (the variant): refused by the validator, named, escaped.
    data["variant"] = "cuda12" + HOSTILE
    receipt.write_text(json.dumps(data))
    proc = cudaenv(["list"], env, tmp)
    check(proc.returncode == 2 and f"{receipt}: variant:".encode() in proc.stderr, f"list: {proc.returncode} {proc.stderr!r}")
    assert_escaped(proc, "list with a receipt's hostile variant")


def planted_sh(text):
    """PLANTED inside a single-quoted sh word: the script carries the raw bytes."""
    return "'" + text.replace("'", "'\\''") + "'"


def stand_in_toolkit(prefix):
    """CUDA 13.0.2 whose nvcc, with FAIL_COMPILE set, fails with PLANTED in its error; otherwise it
    writes a program that reports, as the device query does, a GPU named with PLANTED and a CUDA
    error whose message carries it (tests/fixtures/toolkits/no-kernel-image, made hostile)."""
    shutil.copytree(FIXTURES / "toolkits" / "no-kernel-image", prefix, symlinks=True)
    gpu = planted_sh(f"gpu index=0 cc=9.0 sms=132 memory=85520809984 name=NVIDIA H100{PLANTED}")
    error = planted_sh("error call=transform<<<1024,256>>> code=209 error_name=cudaErrorNoKernelImageForDevice "
                       f"message=no kernel image is available{PLANTED}")
    nvcc = prefix / "bin" / "nvcc"
    nvcc.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0 ;; esac\n'
        'out=""\n'
        'while [ $# -gt 0 ]; do [ "$1" = -o ] && { out="$2"; shift; }; shift; done\n'
        'if [ -n "$FAIL_COMPILE" ]; then\n'
        f"  echo {planted_sh('device_query.cu(1): error: ' + PLANTED)} >&2\n"
        "  exit 2\n"
        "fi\n"
        "{\n"
        "  echo '#!/bin/sh'\n"
        "  echo 'echo \"versions driver=13000 runtime=13000\"'\n"
        "  echo 'echo \"devices count=1\"'\n"
        f"  echo \"echo {gpu.replace(chr(34), '')}\"\n"
        f"  echo \"echo {error.replace(chr(34), '')}\"\n"
        "  echo 'echo \"done status=failed\"'\n"
        "  echo 'exit 1'\n"
        '} > "$out"\n'
        'chmod +x "$out"\n')
    nvcc.chmod(0o755)


@case
def verify_shows_gpu_names_compiler_errors_and_paths_escaped(tmp):
    if not FAKE_DRIVER:
        print("note: no fake driver library: verify's case needs a fixture machine")
        return
    machine = fixture_machine("dgx-h100-580", tmp / "machines")
    for ini in machine.rglob("fake-driver.ini"):  # the driver's own GPU name, as NVML reports it
        ini.write_bytes(ini.read_bytes().replace(b"gpu=NVIDIA H100", ("gpu=NVIDIA H100" + HOSTILE).encode()))
    root = tmp / ("root" + PLANTED)  # CUDAENV_ROOT, from the environment
    stand_in_toolkit(root / "toolkits" / "13.0.2")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", CUDAENV_SYSROOT=machine, CUDAENV_ROOT=root, PATH=DEBIAN_PATH)
    failed = cudaenv(["verify", "13.0"], {**env, "FAIL_COMPILE": "1"}, tmp)
    check(failed.returncode == 7 and b"compile_failed" in failed.stdout, f"a failed compile: {failed}")
    assert_planted_escaped(failed, "verify with a failing compile")
    ran = cudaenv(["verify", "13.0"], env, tmp)
    check(ran.returncode == 7 and b"no_kernel_image" in ran.stdout, f"the program ran: {ran}")
    assert_planted_escaped(ran, "verify with a hostile GPU name")
    report = json.loads(cudaenv(["verify", "13.0", "--json"], env, tmp).stdout)
    check(report["gpus"][0]["name"] == "NVIDIA H100" + PLANTED, f"--json carries the exact name: {report['gpus']}")
    # The names NVML reports, the root's path: every command that shows them escapes them.
    for args in (["list"], ["info"], ["scan", str(tmp / "home")]):
        shown = cudaenv(args, env, tmp)
        for byte in (*CONTROL_BYTES, b"\r"):
            check(byte not in shown.stdout + shown.stderr, f"cudaenv {args[0]}: raw {byte!r}: {shown.stdout[:600]!r}")
        check(b"\\x1b" in shown.stdout, f"cudaenv {args[0]} shows the escaped form: {shown.stdout[:600]!r}")


@case
def a_hostile_store_path_is_shown_escaped_by_install_and_list(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    env = clean_env(tmp / "home", CUDAENV_ROOT=tmp / ("root" + PLANTED), CUDAENV_HTTP_ATTEMPTS=1)
    with mirror_server(tmp / "mirror") as (url, _):
        installed = cudaenv(["install", "12.4.1", "--mirror", url], env, tmp)
        check(installed.returncode == 0, f"install: {installed.stderr!r}")
        assert_planted_escaped(installed, "install into a root named with escapes")
        again = cudaenv(["install", "12.4.1", "--mirror", url], env, tmp)
        assert_planted_escaped(again, "install of what is already installed")
    assert_planted_escaped(cudaenv(["list"], env, tmp), "list of that root")
    project = tmp / "project"
    project.mkdir()
    used = cudaenv(["use", "12.4"], env, project)
    assert_planted_escaped(used, "use")
    assert_planted_escaped(cudaenv(["list"], env, project), "list with the active toolkit marked")


@case
def a_hostile_database_copy_is_refused_and_shown_escaped_by_resolve_use_and_pip_args(tmp):
    """A frameworks.toml in the data root (placed by hand, or how a mirror's `db update` could
    read) whose PyTorch index URL carries escape sequences: refused when the database is loaded
    (exit 6: not a URL), the value shown escaped in the one error line."""
    root = tmp / "root"
    (root / "manifests").mkdir(parents=True)
    source = Path(__file__).resolve().parents[2] / "manifests" / "frameworks.toml"
    text = re.sub(r'^revision = "[^"]+"', 'revision = "2999-01-01"', source.read_text(), count=1, flags=re.M)
    text = text.replace('index_url = "https://download.pytorch.org/whl/{tag}"',
                        f'index_url = "https://download.pytorch.org/whl/{{tag}}{toml_escaped(PLANTED)}"')
    (root / "manifests" / "frameworks.toml").write_text(text)
    env = clean_env(tmp / "home", CUDAENV_ROOT=root)
    resolved = cudaenv(["resolve", "--no-detect", "--cuda", "12.6", "--torch", "2.8"], env, tmp)
    check(resolved.returncode == 6 and b"frameworks.toml:" in resolved.stderr
          and b"index_url" in resolved.stderr, f"resolve: {resolved}")
    assert_planted_escaped(resolved, "resolve with a hostile index URL")
    project = tmp / "project"
    project.mkdir()
    used = cudaenv(["use", "12.6", "--torch", "2.8"], env, project)
    # `use` pins without the database when it cannot load one, saying why.
    check(b"--index-url" not in used.stdout and b"is not a URL" in used.stderr, f"use: {used}")
    assert_planted_escaped(used, "use --torch with a hostile index URL")
    (project / ".cudaenv").write_text('cuda = "12.6"\n[frameworks]\ntorch = "2.8"\n')
    assert_planted_escaped(cudaenv(["pip-args"], env, project), "pip-args with a hostile index URL")


finish()
