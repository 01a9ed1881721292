"""Shared helpers for the CLI tests: run the built cudaenv binary as a user would, in a clean
environment with a temporary HOME, and build fixture machines from tests/fixtures/machines."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BINARY = os.environ["CUDAENV_BIN"]
FIXTURES = Path(os.environ["CUDAENV_FIXTURES_DIR"])
FAKE_DRIVER = os.environ.get("CUDAENV_FAKE_DRIVER", "")
SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests
# A Debian/Ubuntu PATH without any CUDA directory, for runs that must not see this machine's nvcc.
DEBIAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Installing a real toolkit (hundreds of MB of xz) under the sanitizers on a loaded 2-core machine.
REAL_INSTALL_TIMEOUT = 600

_failures = []


def clean_env(home, **extra):
    """A minimal environment: no CUDA variables from the developer's shell leak into a test."""
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
    }
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_in(args, env, cwd, expect=None, timeout=60):
    """cudaenv ARGS in directory `cwd`; with `expect`, checks the exit code (output in the message)."""
    proc = subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if expect is not None:
        check(proc.returncode == expect,
              f"cudaenv {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stdout}\n{proc.stderr}")
    return proc


def run(args, env, check_exit=None, timeout=60):
    """`timeout` only proves "did not hang": installs of real toolkits pass a longer one."""
    proc = subprocess.run([BINARY, *args], env=env, capture_output=True, text=True, timeout=timeout)
    if check_exit is not None and proc.returncode != check_exit:
        raise AssertionError(
            f"cudaenv {' '.join(args)} exited {proc.returncode}, expected {check_exit}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def run_json(args, env):
    proc = run([*args, "--json"], env, check_exit=0)
    return json.loads(proc.stdout)


def fixture_machine(name, into):
    """Copies a fixture machine below `into` and drops the fake driver library on placeholders."""
    root = Path(into) / name
    shutil.copytree(FIXTURES / "machines" / name, root, symlinks=True)
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                if f.readline().rstrip(b"\n") == b"FAKE_NVIDIA_DRIVER":
                    shutil.copyfile(FAKE_DRIVER, path)
    return root


@contextlib.contextmanager
def loopback_server(script, served, settings, control_name):
    """Runs tests/cli/SCRIPT SERVED CONTROL on 127.0.0.1 (the server prints its port first);
    CONTROL is a JSON file holding `settings`, which a test may rewrite while the server runs.
    Yields (base_url, control path)."""
    control = Path(tempfile.mkdtemp(prefix="cudaenv-server-"))
    control_path = control / control_name
    control_path.write_text(json.dumps(settings or {}))
    server = subprocess.Popen([sys.executable, str(Path(__file__).parent / script), str(served),
                               str(control_path)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        yield f"http://127.0.0.1:{port}", control_path
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(control, ignore_errors=True)


@contextlib.contextmanager
def mirror_server(root, faults=None):
    """Serves `root` on 127.0.0.1 (see mirror_server.py); yields (base_url, faults_path).
    Rewrite the faults file to change the faults; its .log records every request."""
    with loopback_server("mirror_server.py", root, faults, "faults.json") as served:
        yield served


def check(condition, message):
    if not condition:
        _failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def expect_error(proc, code, *needles):
    """The command failed with `code` and exactly one "cudaenv: error:" line holding every needle."""
    check(proc.returncode == code, f"exit {proc.returncode}, expected {code}; stderr: {proc.stderr!r}")
    lines = [line for line in proc.stderr.splitlines() if line.startswith("cudaenv: error:")]
    check(len(lines) == 1, f"one error line expected: {proc.stderr!r}")
    for needle in needles:
        check(any(needle in line for line in lines), f"{needle!r} not in the error line: {proc.stderr!r}")
    return lines[0] if lines else ""


def case(function):
    """Runs one test function, recording an exception as a failure; prints its name and outcome."""
    failures_before = len(_failures)
    try:
        with tempfile.TemporaryDirectory(prefix="cudaenv-cli-") as tmp:
            function(Path(tmp))
        print(f"ok: {function.__name__}" if len(_failures) == failures_before else f"failed: {function.__name__}")
    except AssertionError as error:
        _failures.append(f"{function.__name__}: {error}")
        print(f"FAIL: {function.__name__}: {error}", file=sys.stderr)
    except SystemExit as leaving:
        # A case that skips the rest of the file must not turn earlier failures into a skip.
        if leaving.code == SKIP and _failures:
            print(f"{function.__name__} skipped the rest, after {len(_failures)} failure(s)", file=sys.stderr)
            sys.exit(1)
        raise
    return function


def finish():
    if _failures:
        print(f"{len(_failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


# Two small toolkits whose nvcc reports its version and, with --echo-args, its arguments.
SYNTHETIC_RELEASES = {"12.1.1": "12.1.105", "12.4.1": "12.4.131"}


def install_synthetic_toolkits(tmp, releases=SYNTHETIC_RELEASES, **extra_env):
    """Installs the releases with `cudaenv install` from a synthetic mirror served over HTTP;
    returns a clean environment whose CUDAENV_ROOT holds them."""
    from synthetic_mirror import toolkit_release
    for release, nvcc in releases.items():
        toolkit_release(tmp / "mirror", release, nvcc)
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", **extra_env)
    with mirror_server(tmp / "mirror") as (url, _):
        for release in releases:
            run(["install", release, "--mirror", url], env, check_exit=0)
    return env


def global_config(env, text):
    """Writes `text` as the config file of the environment's home; returns its path."""
    config = Path(env["HOME"]) / ".config" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    return config
