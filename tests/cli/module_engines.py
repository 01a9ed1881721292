"""The real module engines the modulefile tests drive: Lmod (the `lmod` Debian package, from
scripts/deps) and Environment Modules (its Debian package conflicts with lmod, so it is fetched
with `apt-get download` and unpacked with `dpkg -x` into the test cache, once)."""

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

LMOD = Path("/usr/share/lmod/lmod/libexec/lmod")


def _cache():
    default = Path.home() / ".cache" / "cudaenv-ci" / "downloads"
    return Path(os.environ.get("CUDAENV_TEST_CACHE") or default) / "environment-modules"


APT_SOURCES = ("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
               "http://deb.debian.org/debian bookworm main\n")


def _apt_download(where):
    """environment-modules' .deb into `where`: with the system's apt state, else (its lists may
    not name the package: no `apt-get update` yet, another release) with a private one in the
    test cache, as debian_cuda.py keeps. Returns (debs, what apt said)."""
    said = ""
    got = subprocess.run(["apt-get", "download", "environment-modules"], cwd=where, capture_output=True,
                         text=True, timeout=120)
    said += got.stderr
    if got.returncode != 0:
        state = _cache().with_name("environment-modules-apt")
        for sub in ("lists/partial", "cache/archives/partial"):
            (state / sub).mkdir(parents=True, exist_ok=True)
        (state / "sources.list").write_text(APT_SOURCES)
        options = ["-o", f"Dir::Etc::SourceList={state}/sources.list", "-o", "Dir::Etc::SourceParts=/dev/null",
                   "-o", f"Dir::State::Lists={state}/lists", "-o", f"Dir::Cache={state}/cache",
                   "-o", "Dir::State::status=/dev/null", "-o", "Debug::NoLocking=1"]
        for command in (["update"], ["download", "environment-modules"]):
            got = subprocess.run(["apt-get", *options, "-qq", *command], cwd=where, capture_output=True,
                                 text=True, timeout=180)
            said += got.stderr
            if got.returncode != 0:
                break
    return list(Path(where).glob("environment-modules_*.deb")), said.strip()


_why_missing = {}


def environment_modules():
    """modulecmd.tcl of Environment Modules, unpacked into the test cache (once: later runs reuse
    it); None when it cannot be had, the reason in missing_engines()."""
    cache = _cache()
    found = sorted(cache.glob("usr/lib/*/modulecmd.tcl")) if cache.exists() else []
    if found:
        return found[0]
    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        _why_missing["environment-modules"] = "no apt-get/dpkg here to fetch it"
        return None
    with tempfile.TemporaryDirectory() as tmp:
        debs, said = _apt_download(tmp)
        if not debs:
            last = "; ".join(line for line in said.splitlines()[-2:])
            _why_missing["environment-modules"] = "apt-get download environment-modules failed: " + last
            return None
        cache.parent.mkdir(parents=True, exist_ok=True)
        unpacking = cache.with_name(cache.name + f".part-{os.getpid()}")
        subprocess.run(["dpkg", "-x", str(debs[0]), str(unpacking)], check=True, timeout=60)
        shutil.rmtree(cache, ignore_errors=True)
        unpacking.rename(cache)
    found = sorted(cache.glob("usr/lib/*/modulecmd.tcl"))
    return found[0] if found else None


def engines():
    """(name, format, shell command that prints bash code) for each engine this machine has."""
    found = []
    if not shutil.which("tclsh"):
        _why_missing["lmod"] = _why_missing["environment-modules"] = "no tclsh (apt install tcl)"
        return found
    if LMOD.exists():
        found.append(("lmod", "lua", shlex.quote(str(LMOD))))
        found.append(("lmod", "tcl", shlex.quote(str(LMOD))))
    else:
        _why_missing["lmod"] = f"no {LMOD} (apt install lmod; scripts/deps --test)"
    modulecmd = environment_modules()
    if modulecmd:
        found.append(("environment-modules", "tcl", "tclsh " + shlex.quote(str(modulecmd))))
    return found


def missing_engines():
    """{engine: why} for the engines the last engines() call did not find."""
    return dict(_why_missing)


def engines_required():
    """Whether a missing engine fails the tests instead of skipping them: scripts/test (and so
    .ci/run) sets CUDAENV_REQUIRE_ENGINES=1."""
    return os.environ.get("CUDAENV_REQUIRE_ENGINES") == "1"


def module_script(engine_command, modulepath, body):
    """A bash script with a `module` function for the engine, MODULEPATH set, then `body`."""
    return (f"module() {{ eval \"$({engine_command} bash \"$@\")\"; }}\n"
            f"export MODULEPATH={shlex.quote(str(modulepath))}\n" + body)
