"""The schema of .cudaenv and config.toml as a user meets it: a misspelled, mis-cased or misplaced
key is named with file:line and what was meant, by `current`, `use`, `doctor` and the prompt hook
(once per change of the file); a file that pins nothing but an unknown key is refused (exit 2,
nothing activated) instead of falling back to another toolkit; beside a valid `cuda` an unknown key
is a warning and the pin holds."""

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import BINARY, case, check, clean_env, expect_error, finish, fixture_machine, global_config, install_synthetic_toolkits
from shells import SHELLS, quote, run_shell

# One store of synthetic toolkits for every case; each case has its own HOME and projects.
_STORE = Path(tempfile.mkdtemp(prefix="cudaenv-schema-store-"))
atexit.register(shutil.rmtree, _STORE, ignore_errors=True)
_STORE_ENV = install_synthetic_toolkits(_STORE)


def user_env(tmp, **extra):
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return clean_env(home, CUDAENV_ROOT=_STORE_ENV["CUDAENV_ROOT"], **extra)


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=dict(env, PWD=str(cwd)), cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def project(tmp, text, name="proj"):
    directory = tmp / name
    directory.mkdir()
    (directory / ".cudaenv").write_text(text)
    return directory


@case
def a_misspelled_pin_is_refused_not_replaced_by_the_global_or_system_toolkit(tmp):
    env = user_env(tmp)
    global_config(env, 'cuda = "12.1"\n')
    typo = project(tmp, '# A100 nodes\ncdua = "12.4"\n', "typo")
    path = typo / ".cudaenv"
    line = expect_error(cudaenv(["current"], env, typo), 2, f'{path}:2: unknown key "cdua"; did you mean "cuda"?')
    check("12.1" not in line, f"the global pin is not used instead: {line}")
    proc = cudaenv(["current"], env, typo)
    check('hint: write cuda = "12.4" on line 2' in proc.stderr, f"the hint is the fix: {proc.stderr!r}")
    check(proc.stdout == "", f"nothing is reported as active: {proc.stdout!r}")
    expect_error(cudaenv(["env", "--shell", "bash"], env, typo), 2, f"{path}:2")

    upper = project(tmp, "CUDA=12.4\n", "upper")
    expect_error(cudaenv(["current"], env, upper), 2, f'{upper}/.cudaenv:1: unknown key "CUDA"',
                 'keys are lower-case: write "cuda"')
    check('hint: write cuda = "12.4" on line 1' in cudaenv(["current"], env, upper).stderr, "the quoted fix")

    misplaced = project(tmp, '[frameworks]\ntorch = "2.5"\ncuda = "12.4"\n', "misplaced")
    expect_error(cudaenv(["current"], env, misplaced), 2, '.cudaenv:3: "cuda" does not belong in [frameworks]',
                 "put it at the top of the file, above any [table] line")


@case
def beside_a_valid_pin_unknown_keys_are_warnings_with_suggestions(tmp):
    env = user_env(tmp)
    proj = project(tmp, 'cuda = "12.4"\ncdnn = "9.1"\ntorch = "2.5"\n[frameworks]\npytorch = "2.5"\n')
    path = proj / ".cudaenv"
    proc = cudaenv(["current"], env, proj)
    check(proc.returncode == 0 and proc.stdout == f"12.4.1 (from {path})\n", f"the pin holds: {proc.stdout!r} {proc.stderr!r}")
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    check(warnings == [f'warning: {path}:2: unknown key "cdnn" (ignored); did you mean "cudnn"?',
                       f'warning: {path}:3: "torch" does not belong here (ignored); put it under [frameworks]',
                       f'warning: {path}:5: unknown key "pytorch" in [frameworks] (ignored); did you mean "torch"?'],
          f"one warning per key, in file order: {proc.stderr!r}")
    # `use` keeps the keys it does not know, and says what is wrong with them.
    use = cudaenv(["use", "12.1"], env, proj)
    check(use.returncode == 0, f"use exits 0: {use.stderr}")
    check(f'warning: {path}:2: unknown key "cdnn" (ignored); did you mean "cudnn"?' in use.stderr,
          f"use reports the unknown key: {use.stderr!r}")
    check('cdnn = "9.1"' in path.read_text(), "the unknown key is kept")


@case
def the_config_file_has_a_schema_too(tmp):
    env = user_env(tmp)
    config = global_config(env, '# defaults\ncdua = "12.4"\n')
    expect_error(cudaenv(["current"], env, tmp), 2, f'{config}:2: unknown key "cdua"; did you mean "cuda"?')
    global_config(env, 'cuda = "12.4"\nmirorr = "http://mirror.example"\n[download]\njbos = 4\n')
    proc = cudaenv(["current"], env, tmp)
    check(proc.returncode == 0 and proc.stdout == f"12.4.1 (from {config})\n", f"{proc.stdout!r} {proc.stderr!r}")
    check(f'warning: {config}:2: unknown key "mirorr" (ignored); did you mean "mirror"?' in proc.stderr, proc.stderr)
    check(f'warning: {config}:4: unknown key "jbos" in [download] (ignored); did you mean "jobs"?' in proc.stderr,
          proc.stderr)


@case
def doctor_reports_the_project_file_problem(tmp):
    machine = fixture_machine("doctor-healthy-2404", tmp / "machines")
    env = user_env(tmp, CUDAENV_SYSROOT=machine)
    warned = project(tmp, 'cuda = "13.0"\ncdnn = "9"\n', "warned")
    proc = cudaenv(["doctor"], env, warned)
    check(f'Note: {warned}/.cudaenv:2: unknown key "cdnn" (ignored); did you mean "cudnn"?' in proc.stdout,
          f"doctor names the unknown key: {proc.stdout}")
    refused = project(tmp, 'cdua = "13.0"\n', "refused")
    proc = cudaenv(["doctor"], env, refused)
    check(f'Note: {refused}/.cudaenv:1: unknown key "cdua"; did you mean "cuda"?; write cuda = "13.0" on line 1'
          in proc.stdout, f"doctor names the refused key and the fix: {proc.stdout}")


@case
def the_prompt_hook_warns_once_per_change_of_the_file(tmp):
    env = user_env(tmp)
    proj = project(tmp, 'cuda = "12.4"\ncdnn = "9.1"\n')
    path = proj / ".cudaenv"
    warning = f'cudaenv: warning: {path}:2: unknown key "cdnn" (ignored); did you mean "cudnn"?'
    for shell in SHELLS:
        path.write_text('cuda = "12.4"\ncdnn = "9.1"\n')
        target = quote(shell, str(path))
        # Markers on stderr, where the hook speaks, keep the order; the edit gets an older time
        # in whole seconds, which every shell's -nt/-ot sees.
        lines = [f"cd {quote(shell, str(proj))}", "echo '== entered' >&2", "cd /", f"cd {quote(shell, str(proj))}",
                 "echo '== re-entered' >&2", "true", f"printf '# edited\\n' >> {target}; touch -d @1600000000 {target}",
                 "echo '== edited' >&2", "true", "echo CUDAENV_ACTIVE=$CUDAENV_ACTIVE"]
        proc = run_shell(shell, tmp, env, lines)
        err = proc.stderr
        check("== end" in proc.stdout, f"{shell}: the script ran to the end: {proc.stdout}\n{err}")
        check(err.count(warning) == 2, f"{shell}: warned at entry and after the edit only: {err}")
        if err.count(warning) == 2:
            first, second = err.index(warning), err.rindex(warning)
            check(first < err.index("== entered"), f"{shell}: warned on entering: {err}")
            check(err.index("== re-entered") < second < err.rindex("== edited"), f"{shell}: warned after the edit: {err}")
        check("CUDAENV_ACTIVE=12.4.1" in proc.stdout, f"{shell}: the pin holds: {proc.stdout}")


finish()
