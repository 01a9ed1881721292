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


def environment_modules():
    """modulecmd.tcl of Environment Modules, unpacked into the test cache; None when it cannot be had."""
    cache = _cache()
    found = sorted(cache.glob("usr/lib/*/modulecmd.tcl")) if cache.exists() else []
    if found:
        return found[0]
    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run(["apt-get", "download", "environment-modules"], cwd=tmp, capture_output=True,
                             text=True, timeout=120)
        debs = list(Path(tmp).glob("environment-modules_*.deb"))
        if got.returncode != 0 or not debs:
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
    if LMOD.exists() and shutil.which("tclsh"):
        found.append(("lmod", "lua", shlex.quote(str(LMOD))))
        found.append(("lmod", "tcl", shlex.quote(str(LMOD))))
    modulecmd = environment_modules()
    if modulecmd and shutil.which("tclsh"):
        found.append(("environment-modules", "tcl", "tclsh " + shlex.quote(str(modulecmd))))
    return found


def module_script(engine_command, modulepath, body):
    """A bash script with a `module` function for the engine, MODULEPATH set, then `body`."""
    return (f"module() {{ eval \"$({engine_command} bash \"$@\")\"; }}\n"
            f"export MODULEPATH={shlex.quote(str(modulepath))}\n" + body)
