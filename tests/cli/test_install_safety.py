"""`cudaenv install` refuses hostile archives: every entry kind that could write outside the
install prefix fails the install with exit 6 naming the entry, and nothing is installed or
written anywhere else."""

import os

from harness import case, check, clean_env, finish, mirror_server, run
from synthetic_mirror import PLATFORM, write_release

NVCC_VERSION = "12.4.131"
TOP = f"cuda_nvcc-{PLATFORM}-{NVCC_VERSION}-archive"
ARCHIVE = f"{TOP}.tar.xz"


def env_for(tmp):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot")


def release_with(tmp, entries):
    """CUDA 12.4.1 whose nvcc archive carries `entries` after an ordinary file."""
    write_release(tmp / "mirror", "12.4.1", {
        "cuda_nvcc": (NVCC_VERSION, [("bin/nvcc", "#!/bin/sh\n", 0o755), *entries], 0),
        "cuda_cudart": ("12.4.127", [("lib/libcudart.so.12", "elf", 0o644)], 0),
    })


def everything_below(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


# name: (entries given the test's tmp dir, the entry the error names, why, a path that must not appear)
UNSAFE = {
    "absolute_path": (lambda tmp: [{"raw": str(tmp / "evil")}],
                      lambda tmp: str(tmp / "evil"), "absolute path", lambda tmp: tmp / "evil"),
    "dot_dot_path": (lambda tmp: [{"raw": f"{TOP}/../../evil"}],
                     lambda tmp: f"{TOP}/../../evil", "path contains ..", lambda tmp: tmp / "root" / "evil"),
    "symlink_to_an_absolute_path": (
        lambda tmp: [{"path": "bin/evil", "kind": "symlink", "target": str(tmp / "outside")},
                     {"path": "bin/evil/planted", "data": b"evil"}],
        lambda tmp: f"{TOP}/bin/evil", "link to an absolute path", lambda tmp: tmp / "outside"),
    "symlink_climbing_out": (
        lambda tmp: [{"path": "bin/up", "kind": "symlink", "target": "../../../../outside"},
                     {"path": "bin/up/planted", "data": b"evil"}],
        lambda tmp: f"{TOP}/bin/up", "link points outside the install directory", lambda tmp: tmp / "outside"),
    "symlink_chain_climbing_out": (
        # Each ".." cancels a name on paper, but a/b leads back to the prefix: c leads to tmp/outside.
        lambda tmp: [{"path": "a/b", "kind": "symlink", "target": ".."},
                     {"path": "c", "kind": "symlink", "target": "a/b/a/b/a/b/../../../outside"}],
        lambda tmp: f"{TOP}/c", "link target has .. after a name", lambda tmp: tmp / "outside"),
    "hard_link_to_an_absolute_path": (
        lambda tmp: [{"path": "bin/hl", "kind": "hardlink", "target": str(tmp / "secret")}],
        lambda tmp: f"{TOP}/bin/hl", "hard link: absolute path", lambda tmp: tmp / "root" / "secret"),
    "hard_link_climbing_out": (
        lambda tmp: [{"path": "bin/hl", "kind": "hardlink", "target": f"{TOP}/../../../secret"}],
        lambda tmp: f"{TOP}/bin/hl", "hard link: path contains ..", lambda tmp: tmp / "root" / "secret"),
    "fifo": (lambda tmp: [{"path": "bin/fifo", "kind": "fifo"}],
             lambda tmp: f"{TOP}/bin/fifo", "FIFO", lambda tmp: tmp / "root" / "fifo"),
    "character_device": (lambda tmp: [{"path": "dev/null", "kind": "chardev"}],
                         lambda tmp: f"{TOP}/dev/null", "character device", lambda tmp: tmp / "root" / "dev"),
}


def unsafe_case(name, entries, named, why, must_not_exist):
    def test(tmp):
        (tmp / "secret").write_text("secret\n")
        release_with(tmp, entries(tmp))
        with mirror_server(tmp / "mirror") as (url, _):
            proc = run(["install", "12.4.1", "--mirror", url], env_for(tmp))
            check(proc.returncode == 6, f"exit {proc.returncode}: {proc.stderr}")
            errors = [line for line in proc.stderr.splitlines() if line.startswith("cudaenv: error:")]
            expected = f"cudaenv: error: corrupt or hostile archive: {ARCHIVE}: {named(tmp)}: "
            check(len(errors) == 1 and errors[0].startswith(expected) and why in errors[0],
                  f"expected {expected!r} … {why!r}: {proc.stderr!r}")
            check("hint: nothing was installed; use another mirror" in proc.stderr, proc.stderr)
            toolkits = tmp / "root" / "toolkits"
            check(everything_below(toolkits) == [".lock-12.4.1"], f"nothing installed: {everything_below(toolkits)}")
            check(not os.path.lexists(must_not_exist(tmp)), f"{must_not_exist(tmp)} was created")
            check(sorted(p.name for p in tmp.iterdir() if not p.name.startswith("faults-")) ==
                  ["mirror", "root", "secret", "sysroot"], f"nothing else in {tmp}: {sorted(os.listdir(tmp))}")
            check((tmp / "secret").read_text() == "secret\n" and (tmp / "secret").stat().st_nlink == 1,
                  "the file outside is untouched")
            listed = run(["list", "--json"], env_for(tmp), check_exit=0)
            check('"installed": []' in listed.stdout, listed.stdout)
    test.__name__ = f"refuses_{name}"
    return test


for kind, spec in UNSAFE.items():
    case(unsafe_case(kind, *spec))


@case
def links_that_stay_inside_the_prefix_install(tmp):
    release_with(tmp, [("lib/libnvvm.so.4", "elf", 0o644),
                       {"path": "lib/libnvvm.so", "kind": "symlink", "target": "libnvvm.so.4"},
                       {"path": "nvvm/lib64", "kind": "symlink", "target": "../lib"},
                       {"path": "lib/libnvvm.hard", "kind": "hardlink", "target": f"{TOP}/lib/libnvvm.so.4"}])
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--mirror", url], env_for(tmp), check_exit=0)
        prefix = tmp / "root" / "toolkits" / "12.4.1"
        check(os.readlink(prefix / "lib" / "libnvvm.so") == "libnvvm.so.4", "relative link kept")
        check((prefix / "nvvm" / "lib64" / "libnvvm.so.4").read_text() == "elf", "a link up and back down")
        check(os.path.samefile(prefix / "lib" / "libnvvm.hard", prefix / "lib" / "libnvvm.so.4"),
              "hard link inside the prefix")


finish()
