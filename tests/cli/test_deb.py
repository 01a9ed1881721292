"""The Debian package (scripts/deb: CPack from the release build) installs with dpkg in a minimal
Debian 12 root (debootstrap --variant=minbase, made once and cached) and runs from /usr: dpkg -i
refuses it while a package its Depends names is missing (so Depends is what the programs need),
installs it in a root with just those packages added, and then `cudaenv --version`, `info`, `init
bash` (naming /usr/libexec/cudaenv/cudaenv-shim), `install` from a loopback mirror, `use`, the
bash hook and a shim call work there; `dpkg -L` lists the programs, hooks, man page and
completions where Debian's tools read them (checked against zsh's fpath and the completion
directories bash-completion and fish declare, where this machine has them); `dpkg -r` removes
every file.

CUDAENV_DEB names the package; scripts/test builds it (scripts/deb) and runs this file with it
set. Without it, the test is skipped."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import minbase_root
from harness import case, check, finish, mirror_server
from synthetic_mirror import toolkit_release

DEB = os.environ.get("CUDAENV_DEB", "")
if not DEB:
    print("skipped: CUDAENV_DEB is not set (scripts/test builds the package and sets it)")
    sys.exit(minbase_root.SKIP)

# Where Debian's tools read each file the package ships.
EXPECTED_FILES = (
    "/usr/bin/cudaenv",
    "/usr/libexec/cudaenv/cudaenv-full",
    "/usr/libexec/cudaenv/cudaenv-shim",
    "/usr/share/cudaenv/cudaenv.bash",
    "/usr/share/cudaenv/cudaenv.zsh",
    "/usr/share/cudaenv/cudaenv.fish",
    "/usr/share/cudaenv/cudaenv.direnvrc",
    "/usr/share/man/man1/cudaenv.1.gz",
    "/usr/share/bash-completion/completions/cudaenv",
    "/usr/share/zsh/vendor-completions/_cudaenv",
    "/usr/share/fish/vendor_completions.d/cudaenv.fish",
    "/usr/share/doc/cudaenv/copyright",
    "/usr/share/doc/cudaenv/THIRD_PARTY_NOTICES",
)
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # root's: dpkg needs sbin


def field(name):
    return subprocess.run(["dpkg-deb", "-f", DEB, name], capture_output=True, text=True, check=True).stdout.strip()


def depended_packages():
    """The package names Depends lists (the first of each alternative)."""
    return [re.match(r"[a-z0-9][a-z0-9.+-]*", part.strip().split("|")[0].strip()).group(0)
            for part in field("Depends").split(",")]


def in_root(root, script, **extra):
    env = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", **extra}
    proc = minbase_root.run(root, script, env)
    print(f"--- in the root: {script}\n{proc.stdout}{proc.stderr}", end="")
    return proc


def missing_in(root, packages):
    """Those of `packages` dpkg does not have installed in `root`."""
    query = in_root(root, "dpkg-query -W -f='${Package} ${Status}\\n' " + " ".join(packages) + " 2>/dev/null; true")
    installed = {line.split()[0] for line in query.stdout.splitlines() if line.endswith(" install ok installed")}
    return [p for p in packages if p not in installed]


def declared_directory(tool):
    """A completion directory as `pkg-config` reports the tool declaring it; None when not here."""
    if not shutil.which("pkg-config"):
        return None
    found = subprocess.run(["pkg-config", "--variable=completionsdir", tool], capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 and found.stdout.strip() else None


@case
def the_package_declares_what_it_needs_and_ships_where_debian_reads(tmp):
    check(field("Package") == "cudaenv" and field("Architecture") == "amd64", "package cudaenv for amd64")
    depends = depended_packages()
    check("libc6" in depends and any(p.startswith("libcurl") for p in depends), f"Depends from dpkg-shlibdeps: {depends}")
    contents = subprocess.run(["dpkg-deb", "-c", DEB], capture_output=True, text=True, check=True).stdout
    shipped = {line.split()[-1].lstrip(".") for line in contents.splitlines()}
    missing = [f for f in EXPECTED_FILES if f not in shipped]
    check(not missing, f"the package ships {missing}")
    check(not any("/site-functions" in f or f.startswith("/usr/local") for f in shipped),
          f"nothing in directories Debian's tools do not read: {sorted(shipped)}")
    # The directories the tools on this machine read, where they can say.
    zsh = shutil.which("zsh")
    if zsh:
        fpath = subprocess.run([zsh, "-fc", "print -l $fpath"], capture_output=True, text=True).stdout.split()
        check("/usr/share/zsh/vendor-completions" in fpath, f"Debian's zsh reads vendor-completions: {fpath}")
    for tool, expected in (("bash-completion", "/usr/share/bash-completion/completions"),
                           ("fish", "/usr/share/fish/vendor_completions.d")):
        declared = declared_directory(tool)
        if declared is None:
            print(f"skip part: {tool} declares no completionsdir here (pkg-config)")
        else:
            check(declared == expected, f"{tool} reads completions from {declared}")


@case
def dpkg_installs_it_in_a_minimal_root_with_its_depends_and_it_runs_from_usr(tmp):
    minbase_root.skip_unless_possible()
    depends = depended_packages()
    bare = minbase_root.unpack(tmp / "bare")
    shutil.copyfile(DEB, bare / "tmp/cudaenv.deb")
    absent = missing_in(bare, depends)
    check(absent, f"the minimal root lacks a package Depends names (libcurl): {depends}")
    refused = in_root(bare, "dpkg -i /tmp/cudaenv.deb")
    check(refused.returncode != 0 and all(f"{p}" in refused.stderr for p in absent),
          f"dpkg -i refuses while {absent} are missing")
    shutil.rmtree(bare, ignore_errors=True)

    root = minbase_root.unpack(tmp / "root", packages=tuple(sorted(absent)))
    shutil.copyfile(DEB, root / "tmp/cudaenv.deb")
    installed = in_root(root, "dpkg -i /tmp/cudaenv.deb")
    check(installed.returncode == 0, "dpkg -i installs it where its Depends are present")
    listed = in_root(root, "dpkg -L cudaenv")
    missing = [f for f in EXPECTED_FILES if f not in listed.stdout.split()]
    check(not missing, f"dpkg -L lists {missing}")

    version = in_root(root, "cd / && cudaenv --version")
    check(version.returncode == 0 and re.fullmatch(r"cudaenv \d+\.\d+\.\d+\S*\n", version.stdout),
          f"--version: {version.stdout!r}")
    info = in_root(root, "cd /tmp && cudaenv info")
    check(info.returncode == 0 and "Debian GNU/Linux 12" in info.stdout and "error" not in info.stderr,
          "info describes the root")
    hook = in_root(root, "cudaenv init bash")
    check("__cudaenv_bin='/usr/libexec/cudaenv/cudaenv-shim'" in hook.stdout, "init bash calls the installed shim")
    man = in_root(root, "gzip -dc /usr/share/man/man1/cudaenv.1.gz | head -5")
    check(".TH" in man.stdout.upper(), "the man page is a gzip'ed roff page")

    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, _):
        install = in_root(root, f"cudaenv install 12.4 --mirror {url}")
    check(install.returncode == 0, "install from the loopback mirror succeeds")
    use = in_root(root, "mkdir -p /root/project && cd /root/project && cudaenv use 12.4")
    check(use.returncode == 0, "use pins the project")
    shim = in_root(root, "cd /root/project && readlink -f /root/.local/share/cudaenv/shims/nvcc && "
                         "/root/.local/share/cudaenv/shims/nvcc --version")
    check(shim.stdout.startswith("/usr/libexec/cudaenv/cudaenv-shim\n") and "V12.4.131" in shim.stdout,
          "the nvcc shim is the installed shim program and runs the pinned nvcc")
    (root / "root/.bashrc").write_text('eval "$(cudaenv init bash)"\n')
    (root / "root/session").write_text('cd /root/project\necho "active=$CUDAENV_ACTIVE"\nnvcc --version\nexit\n')
    session = in_root(root, "bash -i < /root/session 2>&1", TERM="dumb")
    check("active=12.4.1" in session.stdout and "V12.4.131" in session.stdout,
          "the bash hook activates the pinned toolkit at the prompt")

    removed = in_root(root, "dpkg -r cudaenv")
    check(removed.returncode == 0, "dpkg -r removes it")
    left = [f for f in EXPECTED_FILES if (root / f.lstrip("/")).exists()]
    check(not left and not (root / "usr/libexec/cudaenv").exists(), f"dpkg -r leaves no file behind: {left}")


finish()
