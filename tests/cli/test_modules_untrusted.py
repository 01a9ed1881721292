"""`cudaenv modules write` with hostile inputs. A database copy in the data root whose GPU
architecture name holds Tcl or Lua code is refused when it is loaded (exit 6): no modulefile is
written, and the real engines (Lmod, Environment Modules) loading whatever is in the directory run
nothing. A symbolic link planted in the modules directory under any name the writer uses (the
cuda/ or cudnn/ directory, a modulefile's own name, the temporary name the old writer derived from
its pid) never carries a write elsewhere."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import case, check, clean_env, expect_error, finish, mirror_server, run
from module_engines import engines, engines_required, missing_engines, module_script
from synthetic_mirror import cudnn_release, toolkit_release

REPO_MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
BINARY = os.environ.get("CUDAENV_BIN", "cudaenv")
VICTIM_TEXT = "a file of the site's that no modulefile write may touch\n"


def install_store(tmp):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70", variants=("12",))
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "nodriver")
    (tmp / "nodriver").mkdir()
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--cudnn", "9", "--mirror", url], env, check_exit=0)
    return env


def hostile_database(env, sm):
    """cuda.toml in the data root, newer than the compiled-in one, whose sm_90 row is `sm`."""
    text = (REPO_MANIFESTS / "cuda.toml").read_text()
    text = text.replace('revision = "', 'revision = "2999-01-01" # was "', 1)
    check('sm = "sm_90"' in text, "the database has an sm_90 row to replace")
    escaped = sm.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace('sm = "sm_90"', f'sm = "{escaped}"', 1)
    manifests = Path(env["CUDAENV_ROOT"]) / "manifests"
    manifests.mkdir(parents=True, exist_ok=True)
    (manifests / "cuda.toml").write_text(text)


def load_everything(modules_dir, env, tmp):
    """Loads every modulefile in `modules_dir` with every engine here; returns the engines."""
    found = engines()
    missing = missing_engines()
    check(not (missing and engines_required()), f"engines missing, and required: {missing}")
    for engine, why in missing.items():
        print(f"note: {engine} not tried: {why}", file=sys.stderr)
    names = sorted(str(p.relative_to(modules_dir)).removesuffix(".lua")
                   for p in modules_dir.rglob("*") if p.is_file())
    for engine, fmt, command in found:
        work = Path(tempfile.mkdtemp(dir=tmp))
        body = "".join(f"module load {name} 2>/dev/null\n" for name in names) + "true\n"
        script = module_script(command, modules_dir, body)
        subprocess.run(["bash", "-c", script], env={**env, "HOME": str(tmp)}, cwd=work,
                       capture_output=True, text=True, timeout=60)
    return [e for e, _, _ in found]


PAYLOADS = [
    ("tcl", 'sm_90} ; exec touch PWNED ; puts stderr {'),
    ("tcl", "sm_90 [exec touch PWNED]"),
    ("lua", 'sm_90") os.execute("touch PWNED") whatis("'),
    ("lua", "sm_90]] os.execute('touch PWNED') --[["),
]


@case
def a_database_sm_name_holding_code_is_refused_at_load_and_never_runs(tmp):
    env = install_store(tmp)
    for number, (fmt, sm) in enumerate(PAYLOADS):
        hostile_database(env, sm)
        out = tmp / f"modules-{number}"
        proc = run(["modules", "write", str(out), "--format", fmt], env)
        expect_error(proc, 6, "cuda.toml:", "sm:", "is not a GPU architecture")
        check("corrupt or hostile" in proc.stderr, proc.stderr)
        written = [p for p in out.rglob("*") if p.is_file()] if out.exists() else []
        check(written == [], f"{fmt} {sm!r}: no modulefile written: {written}")
        # Whatever is there (nothing, here; the hostile files on a writer that let them through),
        # loaded by the real engines, runs no code.
        if out.exists():
            load_everything(out, env, tmp)
        pwned = list(tmp.rglob("PWNED"))
        check(pwned == [], f"{fmt} {sm!r}: code from the database ran at module load: {pwned}")
        for path in pwned:
            path.unlink()
    (Path(env["CUDAENV_ROOT"]) / "manifests" / "cuda.toml").unlink()
    run(["modules", "write", str(tmp / "good")], env, check_exit=0)


def victim(tmp):
    """A site's directory holding one file, made afresh for each case."""
    shutil.rmtree(tmp / "site", ignore_errors=True)
    path = tmp / "site" / "profile.lua"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    return path


def untouched(tmp, what):
    site = tmp / "site"
    check(sorted(p.name for p in site.iterdir()) == ["profile.lua"], f"{what}: nothing written in the "
                                                                       f"link's target: {list(site.iterdir())}")
    check((site / "profile.lua").read_text() == VICTIM_TEXT, f"{what}: the site's file is unchanged")


@case
def a_planted_link_in_the_modules_directory_never_redirects_a_write(tmp):
    env = install_store(tmp)
    target = victim(tmp)
    # The cuda/ directory a link to another directory.
    out = tmp / "dir-link"
    out.mkdir()
    (out / "cuda").symlink_to(target.parent, target_is_directory=True)
    proc = run(["modules", "write", str(out)], env)
    expect_error(proc, 2, str(out / "cuda"), "symbolic link")
    untouched(tmp, "cuda/ a link")
    check(not (out / "cudnn").exists() or not any((out / "cudnn").iterdir()), "nothing written at all")
    # cudnn/ likewise.
    target = victim(tmp)
    out = tmp / "cudnn-link"
    out.mkdir()
    (out / "cudnn").symlink_to(target.parent, target_is_directory=True)
    expect_error(run(["modules", "write", str(out)], env), 2, str(out / "cudnn"), "symbolic link")
    untouched(tmp, "cudnn/ a link")
    # A modulefile's own name a link to the site's file.
    target = victim(tmp)
    out = tmp / "file-link"
    (out / "cuda").mkdir(parents=True)
    (out / "cuda" / "12.4.1.lua").symlink_to(target)
    expect_error(run(["modules", "write", str(out)], env), 2, "12.4.1.lua", "symbolic link")
    untouched(tmp, "cuda/12.4.1.lua a link")
    # The temporary name a writer could derive from its pid, planted for the pid it will have:
    # the shell execs cudaenv, which keeps the shell's pid.
    target = victim(tmp)
    out = tmp / "tmp-link"
    (out / "cuda").mkdir(parents=True)
    (out / "cudnn").mkdir()
    script = ('ln -s "$VICTIM" "$OUT/cuda/.12.4.1.lua.tmp-$$"; '
              'ln -s "$VICTIM" "$OUT/cudnn/.9.1.0-cuda12.lua.tmp-$$"; exec "$CUDAENV" modules write "$OUT"')
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60,
                          env={**env, "VICTIM": str(target), "OUT": str(out), "CUDAENV": BINARY})
    check(proc.returncode == 0, f"written beside the planted links: {proc.returncode} {proc.stderr}")
    untouched(tmp, "a planted temporary name")
    check("written by cudaenv modules write" in (out / "cuda" / "12.4.1.lua").read_text(),
          "the modulefile itself is written")
    check(not (out / "cuda" / "12.4.1.lua").is_symlink(), "a regular file, not the planted link")


finish()
