"""`cudaenv env`, `exec`, `which` and the shims give exactly the environment docs/design.md §4 lists and
run the toolkit that applies in the current directory, arguments and exit status untouched."""

import json
import subprocess

from harness import BINARY, case, check, expect_error, finish, install_synthetic_toolkits

TRICKY_ARGS = ["two words", "", "it's", '"quoted"', "$(touch pwned)", "--flag=a b", "*"]


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def setup(tmp):
    env = install_synthetic_toolkits(tmp, PATH="/usr/bin:/bin")
    a, b = tmp / "a", tmp / "a" / "b"
    b.mkdir(parents=True)
    (a / ".cudaenv").write_text('cuda = "12.1"\n')
    (b / ".cudaenv").write_text('cuda = "12.4"\n')
    return env, a, b


@case
def env_json_gives_exactly_the_designed_variables(tmp):
    env, a, _ = setup(tmp)
    prefix = f"{tmp}/root/toolkits/12.1.1"
    data = json.loads(cudaenv(["env", "--shell", "json"], dict(env, LD_LIBRARY_PATH="/site/lib"), a).stdout)
    check(data == {"CUDA_HOME": prefix, "CUDA_PATH": prefix, "CUDAToolkit_ROOT": prefix, "CUDACXX": f"{prefix}/bin/nvcc",
                   "PATH": f"{prefix}/bin:/usr/bin:/bin", "LD_LIBRARY_PATH": f"{prefix}/lib64:/site/lib",
                   "CUDAENV_ACTIVE": "12.1.1", "CUDAHOSTCXX": None, "NVCC_PREPEND_FLAGS": None}, f"env json: {data}")
    outside = json.loads(cudaenv(["env", "--shell", "json"], env, tmp).stdout)
    check(outside["CUDA_HOME"] is None and outside["PATH"] == "/usr/bin:/bin", f"system: unset is null: {outside}")
    script = cudaenv(["env", "--shell", "bash"], env, a).stdout
    shown = subprocess.run(["bash", "-c", script + 'echo "$CUDACXX|$CUDAENV_ACTIVE"'], capture_output=True, text=True)
    check(shown.stdout == f"{prefix}/bin/nvcc|12.1.1\n", f"bash evaluates it: {shown.stdout!r} {shown.stderr}")
    expect_error(cudaenv(["env", "--shell", "tcsh"], env, a), 2, "--shell", "tcsh")


@case
def a_pinned_cudnn_puts_its_lib_after_the_toolkits_lib64(tmp):
    from harness import mirror_server, run
    from synthetic_mirror import cudnn_release
    env, _, b = setup(tmp)
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    with mirror_server(tmp / "mirror") as (url, _):
        run(["install", "12.4.1", "--cudnn", "9.1", "--mirror", url], env, check_exit=0)
    (b / ".cudaenv").write_text('cuda = "12.4"\ncudnn = "9"\n')
    data = json.loads(cudaenv(["env", "--shell", "json"], env, b).stdout)
    check(data["LD_LIBRARY_PATH"] == f"{tmp}/root/toolkits/12.4.1/lib64:{tmp}/root/cudnn/9.1.0-cuda12/lib",
          f"cuDNN's lib follows lib64: {data}")
    current = json.loads(cudaenv(["current", "--json"], env, b).stdout)
    check(current["cudnn"] == "9.1.0" and current["version"] == "12.4.1", f"current --json: {current}")


@case
def exec_runs_the_projects_toolkit_with_arguments_and_status_intact(tmp):
    env, a, b = setup(tmp)
    proc = subprocess.run([BINARY, "exec", "--", "nvcc", "--echo-args", *TRICKY_ARGS], env=dict(env, FAKE_NVCC_EXIT="5"),
                          cwd=a, capture_output=True, text=True)
    check(proc.returncode == 5, f"the command's exit status is exec's: {proc.returncode} {proc.stderr}")
    check(proc.stdout.splitlines() == [f"nvcc 12.1.105 CUDA_HOME={tmp}/root/toolkits/12.1.1"] +
          [f"[{arg}]" for arg in TRICKY_ARGS], f"arguments intact: {proc.stdout}")
    proc = cudaenv(["exec", "--cuda", "12.4", "--", "nvcc", "--version"], env, a)
    check("V12.4.131" in proc.stdout, f"--cuda overrides the project: {proc.stdout}")
    expect_error(cudaenv(["exec", "--cuda", "11.8", "--", "nvcc"], env, a), 3, "11.8", "not installed")
    expect_error(cudaenv(["exec", "--", "no-such-tool-here"], env, a), 3, "no-such-tool-here")
    check(not (a / "pwned").exists(), "arguments are never evaluated by a shell")


@case
def shims_run_each_projects_nvcc_and_fail_loudly_otherwise(tmp):
    env, a, b = setup(tmp)
    shim = tmp / "root" / "shims" / "nvcc"
    check(shim.is_symlink(), "install created the nvcc shim")
    for where, version in ((a, "12.1.105"), (b, "12.4.131")):
        proc = subprocess.run([str(shim), "--echo-args", *TRICKY_ARGS], env=dict(env, FAKE_NVCC_EXIT="3"), cwd=where,
                              capture_output=True, text=True)
        check(proc.returncode == 3, f"exit status passed through: {proc.returncode} {proc.stderr}")
        check(proc.stdout.splitlines() == [f"nvcc {version} CUDA_HOME={tmp}/root/toolkits/{version[:4]}.1"] +
              [f"[{arg}]" for arg in TRICKY_ARGS], f"{where}: {proc.stdout}")
    check(cudaenv(["which", "nvcc"], env, b).stdout == f"{tmp}/root/toolkits/12.4.1/bin/nvcc\n", "which in B")
    expect_error(cudaenv(["which", "ncu"], env, a), 3, "ncu", "12.1.1")
    # Outside any project, with the shims first on PATH and no other nvcc: a clear error, no loop.
    on_path = dict(env, PATH=f"{shim.parent}:/usr/bin:/bin")
    proc = subprocess.run([str(shim), "--version"], env=on_path, cwd=tmp, capture_output=True, text=True, timeout=20)
    check(proc.returncode == 3 and "no CUDA version is selected here" in proc.stderr, f"outside: {proc.stderr}")
    # With a system nvcc further down PATH, the system's applies outside projects.
    system = tmp / "system-bin"
    system.mkdir()
    (system / "nvcc").write_text("#!/bin/sh\necho system nvcc\n")
    (system / "nvcc").chmod(0o755)
    on_path["PATH"] += f":{system}"
    check(subprocess.run([str(shim)], env=on_path, cwd=tmp, capture_output=True, text=True).stdout == "system nvcc\n",
          "the system's nvcc outside projects")
    check(cudaenv(["which", "nvcc"], on_path, tmp).stdout == f"{system}/nvcc\n", "which names it")


@case
def the_hook_program_answers_hook_env_exactly_as_cudaenv_does(tmp):
    import os
    env, a, b = setup(tmp)
    shim_program = os.path.join(os.path.dirname(BINARY), "cudaenv-shim")
    hook = cudaenv(["init", "bash"], env, tmp).stdout
    check(f"__cudaenv_bin='{shim_program}'" in hook, f"init calls the small program: {hook[:600]}")
    (tmp / "broken").mkdir()
    (tmp / "broken" / ".cudaenv").write_text("cuda = [\n")
    for where in (a, b, tmp, tmp / "broken"):
        for shell in ("bash", "zsh", "fish"):
            mine = cudaenv(["hook-env", "--shell", shell], env, where)
            small = subprocess.run([shim_program, "hook-env", "--shell", shell], env=env, cwd=where,
                                   capture_output=True, text=True)
            check((mine.returncode, mine.stdout, mine.stderr) == (small.returncode, small.stdout, small.stderr),
                  f"{where} {shell}: cudaenv:\n{mine.stdout}{mine.stderr}\nshim:\n{small.stdout}{small.stderr}")
    check("broken/.cudaenv:1" in small.stderr, f"the problem line names the file: {small.stderr}")
    bad = subprocess.run([shim_program, "hook-env", "--shell", "tcsh"], env=env, capture_output=True, text=True)
    check(bad.returncode == 2 and "tcsh" in bad.stderr, f"an unknown shell is a usage error: {bad.stderr}")


@case
def rehash_follows_installs_and_uninstalls(tmp):
    env, a, _ = setup(tmp)
    shims = tmp / "root" / "shims"
    extra = tmp / "root" / "toolkits" / "12.4.1" / "bin" / "cuobjdump"
    extra.write_text("#!/bin/sh\necho cuobjdump\n")
    extra.chmod(0o755)
    proc = cudaenv(["rehash"], env, tmp)
    check(proc.stdout == f"2 shims in {shims}\n", f"rehash: {proc.stdout!r}")
    check(sorted(p.name for p in shims.iterdir()) == ["cuobjdump", "nvcc"], "one shim per tool")
    cudaenv(["uninstall", "12.4.1"], env, tmp)
    check(sorted(p.name for p in shims.iterdir()) == ["nvcc"], "uninstall removes the shims of tools gone")
    cudaenv(["uninstall", "12.1.1"], env, tmp)
    check(list(shims.iterdir()) == [], "no toolkit, no shims")


finish()
