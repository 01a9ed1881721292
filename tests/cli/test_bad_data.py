"""Wrongly typed, missing and hostile fields in data cudaenv reads: a mirror's redist manifests
(exit 6, naming the URL, the component and the field) and the store's receipts (exit 2, naming the
file and the field). Never "internal error", and nothing is installed from a bad manifest."""

import json
import subprocess

from harness import BINARY, case, check, clean_env, expect_error, finish, mirror_server, run
from synthetic_mirror import PLATFORM, toolkit_release


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", **extra)


def installed(tmp):
    """Installed toolkits (lock files, which outlive an install by design, aside)."""
    directory = tmp / "root" / "toolkits"
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith(".lock-")) \
        if directory.exists() else []


def no_internal_error(proc):
    check("internal error" not in proc.stderr, f"an internal error: {proc.stderr!r}")


def hostile_release(tmp, version, edit):
    """A synthetic release whose manifest `edit` then spoils; served manifests are rewritten."""
    manifest = toolkit_release(tmp / "mirror", version, version + ".1")
    edit(manifest)
    path = tmp / "mirror" / "cuda" / "redist" / f"redistrib_{version}.json"
    path.write_text(json.dumps(manifest))
    return f"/cuda/redist/redistrib_{version}.json"


def set_field(component, field, value):
    def edit(manifest):
        manifest[component][PLATFORM][field] = value
    return edit


def drop_field(component, field):
    def edit(manifest):
        del manifest[component][PLATFORM][field]
    return edit


def rename_component(old, new):
    def edit(manifest):
        manifest[new] = manifest.pop(old)
    return edit


def set_label(component, field, value):
    def edit(manifest):
        manifest[component][field] = value
    return edit


# (release, how its manifest is spoiled, what the error line names)
MIRROR_CASES = [
    ("12.1.1", set_field("cuda_nvcc", "size", "abc"), f"cuda_nvcc.{PLATFORM}: size: \"abc\" is not a size in bytes"),
    ("12.2.2", drop_field("cuda_cudart", "sha256"), f"cuda_cudart.{PLATFORM}: sha256 is missing"),
    ("12.3.2", rename_component("cuda_cccl", "../../etc"), "unsafe component name \"../../etc\""),
    ("12.5.1", set_label("cuda_nvcc", "version", "12.5.1\nINSTALLED OK"),
     "cuda_nvcc: version \"12.5.1\\x0aINSTALLED OK\" is not a version"),
    ("12.6.3", set_label("cuda_cudart", "name", 42), "cuda_cudart: name must be a string"),
    ("12.8.1", set_field("cuda_nvcc", "size", -5), f"cuda_nvcc.{PLATFORM}: size: \"-5\" is not a size in bytes"),
]


@case
def a_mirror_manifest_with_bad_fields_fails_with_exit_6_naming_the_field(tmp):
    paths = {release: hostile_release(tmp, release, edit) for release, edit, _ in MIRROR_CASES}
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        for release, _, needle in MIRROR_CASES:
            proc = run(["install", release, "--components", "full"], env)
            no_internal_error(proc)
            expect_error(proc, 6, f"{url}{paths[release]}: {needle}")
            check("\nINSTALLED OK" not in proc.stderr, f"a raw newline from the mirror: {proc.stderr!r}")
        check(installed(tmp) == [], f"nothing installed from a bad manifest: {installed(tmp)}")
        # The mirror is otherwise fine: a good release still installs.
        toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
        run(["install", "12.4.1"], env, check_exit=0)


def spoil_receipt(tmp, version, edit):
    receipt_path = tmp / "root" / "toolkits" / version / "cudaenv-receipt.json"
    receipt = json.loads(receipt_path.read_text())
    edit(receipt)
    receipt_path.write_text(json.dumps(receipt))
    return receipt_path


@case
def a_receipt_with_a_wrong_type_is_named_with_exit_2(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    with mirror_server(tmp / "mirror") as (url, _):
        env = env_for(tmp, CUDAENV_MIRROR=url)
        run(["install", "12.4.1"], env, check_exit=0)
        receipt = spoil_receipt(tmp, "12.4.1", lambda r: r.update(product=5))
        for args in (["list"], ["list", "--json"], ["install", "12.4.1"]):
            proc = run(args, env)
            no_internal_error(proc)
            expect_error(proc, 2, f"{receipt}: product must be a string")
        spoil_receipt(tmp, "12.4.1", lambda r: r.update(product="cuda", components=[{"name": "x", "size": "1"}]))
        proc = run(["list"], env)
        no_internal_error(proc)
        expect_error(proc, 2, f"{receipt}: components[0]: size must be a whole number")
        receipt.write_text('{"product": "cuda", ')
        expect_error(run(["list"], env), 2, f"{receipt}: is not a JSON object")
        # Values other code reads as versions, names and digests go through the one validator.
        for edit, field in ((lambda r: r.update(version="../12.4.1"), "version"),
                            (lambda r: r.update(product="cuda", version="12.4.1", source="npm"), "source must be"),
                            (lambda r: r.update(source="redist", components=[{"name": "../nvcc"}]),
                             "components[0].name"),
                            (lambda r: r.update(components=[{"name": "cuda_nvcc", "sha256": "zz"}]),
                             "components[0].sha256")):
            receipt.write_text(json.dumps({"product": "cuda", "version": "12.4.1"}))
            spoil_receipt(tmp, "12.4.1", edit)
            proc = run(["list"], env)
            no_internal_error(proc)
            expect_error(proc, 2, f"{receipt}: {field}")
        # The way out the hint names works: --force reinstalls, uninstall removes.
        run(["install", "12.4.1", "--force"], env, check_exit=0)
        check(json.loads(receipt.read_text())["product"] == "cuda", "--force wrote a fresh receipt")
        spoil_receipt(tmp, "12.4.1", lambda r: r.update(version=["12.4.1"]))
        run(["uninstall", "12.4.1"], env, check_exit=0)
        check(installed(tmp) == [], f"uninstall removed it: {installed(tmp)}")
        run(["list"], env, check_exit=0)


@case
def a_cudaenv_with_characters_the_toml_reader_mishandles_is_refused_with_its_line(tmp):
    # toml++ 3.3 reaches __builtin_unreachable() on U+03DB where it looks for whitespace.
    env = env_for(tmp)
    (tmp / ".cudaenv").write_bytes('cuda = "12.1"\n\u03db\n'.encode())
    proc = subprocess.run([BINARY, "current"], env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
    no_internal_error(proc)
    check("runtime error" not in proc.stderr, f"undefined behaviour: {proc.stderr!r}")
    expect_error(proc, 2, f"{tmp}/.cudaenv:2: character U+03DB is not supported")
    config = tmp / ".config" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes('mirror = "http://m"\n\u03db\n'.encode())
    (tmp / ".cudaenv").unlink()
    proc = subprocess.run([BINARY, "current"], env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
    check("runtime error" not in proc.stderr, f"undefined behaviour: {proc.stderr!r}")
    expect_error(proc, 2, f"{config}:2: character U+03DB is not supported")


finish()
