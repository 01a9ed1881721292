"""`cudaenv uninstall` takes the specs `install` takes (one match is removed, several are listed and
nothing is removed), removes cuDNN builds with --cudnn, and keeps the toolkit the global config
pins unless --force. Toolkits come from a synthetic mirror served over HTTP."""

from harness import case, check, clean_env, expect_error, finish, mirror_server, run
from synthetic_mirror import cudnn_release, toolkit_release


def env_for(tmp, **extra):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=tmp / "sysroot", **extra)


def entries(tmp, kind="toolkits"):
    directory = tmp / "root" / kind
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) if directory.exists() else []


def install_all(tmp, env, *commands):
    toolkit_release(tmp / "mirror", "12.4.1", "12.4.131")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    toolkit_release(tmp / "mirror", "13.0.2", "13.0.88")
    cudnn_release(tmp / "mirror", "9.1.0", "9.1.0.70")
    with mirror_server(tmp / "mirror") as (url, _):
        for command in commands:
            run([*command, "--mirror", url], env, check_exit=0)


@case
def a_spec_names_the_one_installed_match_and_ambiguity_removes_nothing(tmp):
    env = env_for(tmp)
    install_all(tmp, env, ["install", "12.4.1"], ["install", "12.6.3"], ["install", "13.0.2"])
    ambiguous = run(["uninstall", "12"], env)
    line = expect_error(ambiguous, 2, 'SPEC: "12" matches 2 installed toolkits: 12.6.3, 12.4.1')
    check("cudaenv uninstall 12.6.3" in ambiguous.stderr, f"the hint names an exact one: {ambiguous.stderr}")
    check(entries(tmp) == ["12.4.1", "12.6.3", "13.0.2"], f"nothing removed: {entries(tmp)} {line}")
    removed = run(["uninstall", "12.6"], env, check_exit=0)
    check(removed.stdout == "removed CUDA 12.6.3\n", removed.stdout)
    check(run(["uninstall", "13"], env, check_exit=0).stdout == "removed CUDA 13.0.2\n", "13 -> 13.0.2")
    check(entries(tmp) == ["12.4.1"], f"{entries(tmp)}")
    expect_error(run(["uninstall", "12.5"], env), 3, "CUDA 12.5 is not installed")
    expect_error(run(["uninstall", "banana"], env), 2, "SPEC", "banana")
    expect_error(run(["uninstall"], env), 2, "name what to remove")
    check(run(["uninstall", "latest"], env, check_exit=0).stdout == "removed CUDA 12.4.1\n", "latest, alone")


@case
def cudnn_builds_are_removed_by_spec_or_by_name(tmp):
    env = env_for(tmp)
    install_all(tmp, env, ["install", "12.4.1", "--cudnn", "9.1"], ["install", "13.0.2", "--cudnn", "9.1"])
    check(entries(tmp, "cudnn") == ["9.1.0-cuda12", "9.1.0-cuda13"], f"{entries(tmp, 'cudnn')}")
    both = run(["uninstall", "--cudnn", "9.1"], env)
    expect_error(both, 2, "--cudnn", "9.1.0-cuda13, 9.1.0-cuda12")
    check("cudaenv uninstall --cudnn 9.1.0-cuda13" in both.stderr, both.stderr)
    proc = run(["uninstall", "--cudnn", "9.1.0-cuda13"], env, check_exit=0)
    check(proc.stdout == "removed cuDNN 9.1.0-cuda13\n", proc.stdout)
    check(entries(tmp) == ["12.4.1", "13.0.2"], f"no toolkit removed: {entries(tmp)}")
    # A toolkit and a cuDNN together: the cuDNN build for that toolkit's CUDA major.
    proc = run(["uninstall", "12.4", "--cudnn", "9"], env, check_exit=0)
    check(proc.stdout == "removed CUDA 12.4.1\nremoved cuDNN 9.1.0-cuda12\n", proc.stdout)
    check(entries(tmp, "cudnn") == [] and entries(tmp) == ["13.0.2"], f"{entries(tmp)} {entries(tmp, 'cudnn')}")
    expect_error(run(["uninstall", "--cudnn", "9"], env), 3, "cuDNN 9 is not installed")


@case
def the_global_default_is_kept_unless_forced(tmp):
    env = env_for(tmp)
    install_all(tmp, env, ["install", "12.4.1"], ["install", "12.6.3"])
    config = tmp / ".config" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('cuda = "12"\n')
    refused = run(["uninstall", "12.6"], env)
    expect_error(refused, 1, "CUDA 12.6.3 is the global default", f'cuda = "12" in {config}')
    check("cudaenv use --global system" in refused.stderr and "--force" in refused.stderr, refused.stderr)
    check(entries(tmp) == ["12.4.1", "12.6.3"], f"kept: {entries(tmp)}")
    # 12.4.1 is not what the pin selects (12.6.3 is): it goes without --force.
    run(["uninstall", "12.4.1"], env, check_exit=0)
    forced = run(["uninstall", "12.6", "--force"], env, check_exit=0)
    check(forced.stdout == "removed CUDA 12.6.3\n", forced.stdout)
    check(entries(tmp) == [], f"{entries(tmp)}")


finish()
