"""`cudaenv use` pins a version in .cudaenv (or the global config) keeping the file's comments and
unknown keys; `cudaenv current` says which version applies here and what set it."""

import subprocess

from harness import BINARY, case, check, clean_env, expect_error, finish, install_synthetic_toolkits


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


@case
def use_writes_a_project_file_that_current_then_reports(tmp):
    env = install_synthetic_toolkits(tmp)
    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True)
    proc = cudaenv(["use", "12.1"], env, repo)
    check(proc.returncode == 0, f"use exits 0: {proc.stderr}")
    check((repo / ".cudaenv").read_text() == 'cuda = "12.1"\n', f"file: {(repo / '.cudaenv').read_text()!r}")
    check(f"active here: CUDA 12.1.1 ({tmp}/root/toolkits/12.1.1)" in proc.stdout, proc.stdout)
    current = cudaenv(["current"], env, repo / "src")
    check(current.stdout == f"12.1.1 (from {repo}/.cudaenv)\n", f"current: {current.stdout!r}")
    forced = cudaenv(["current"], dict(env, CUDAENV_VERSION="12.4"), repo / "src")
    check(forced.stdout == "12.4.1 (from CUDAENV_VERSION)\n", f"CUDAENV_VERSION wins: {forced.stdout!r}")
    check(cudaenv(["current"], env, tmp).stdout == "system\n", "no selection outside the project")


@case
def updating_keeps_comments_unknown_keys_and_frameworks(tmp):
    env = install_synthetic_toolkits(tmp)
    project = tmp / "p"
    project.mkdir()
    (project / ".cudaenv").write_text('# our team pin\ncuda = "12.1"  # keep this comment\nowner = "ml-infra"\n\n'
                                      '[frameworks]\ntorch = "2.3"\n# why 2.3: see ticket\n')
    proc = cudaenv(["use", "12.4", "--cudnn", "9.1", "--torch", "2.5", "--jax", "12"], env, project)
    check(proc.returncode == 0, f"use exits 0: {proc.stderr}")
    text = (project / ".cudaenv").read_text()
    check(text == '# our team pin\ncuda = "12.4"  # keep this comment\nowner = "ml-infra"\ncudnn = "9.1"\n\n'
                  '[frameworks]\ntorch = "2.5"\n# why 2.3: see ticket\njax = "12"\n', f"updated file:\n{text}")
    # cuDNN 9.1 is pinned but not installed: use warns, current says what to install.
    check("cudaenv install 12.4.1 --cudnn 9.1" in proc.stderr, f"use warns about the missing cuDNN: {proc.stderr}")
    expect_error(cudaenv(["current"], env, project), 3, "cuDNN 9.1", str(project / ".cudaenv"))


@case
def a_bare_version_file_becomes_toml_when_updated(tmp):
    env = install_synthetic_toolkits(tmp)
    (tmp / "p").mkdir()
    (tmp / "p" / ".cudaenv").write_text("# pinned for the cluster\n12.1\n")
    check(cudaenv(["current"], env, tmp / "p").stdout.startswith("12.1.1 "), "a bare version selects")
    check(cudaenv(["use", "12.4"], env, tmp / "p").returncode == 0, "use exits 0")
    check((tmp / "p" / ".cudaenv").read_text() == '# pinned for the cluster\ncuda = "12.4"\n',
          (tmp / "p" / ".cudaenv").read_text())


@case
def global_sets_the_config_default_keeping_its_other_settings(tmp):
    env = install_synthetic_toolkits(tmp)
    config = tmp / ".config" / "cudaenv" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('mirror = "http://mirror.example/compute"\n\n[download]\njobs = 4\n')
    check(cudaenv(["use", "12.4", "--global"], env, tmp).returncode == 0, "use --global exits 0")
    check(config.read_text() == 'mirror = "http://mirror.example/compute"\ncuda = "12.4"\n\n[download]\njobs = 4\n',
          config.read_text())
    check(cudaenv(["current"], env, tmp).stdout == f"12.4.1 (from {config})\n", "the config's default applies")
    expect_error(cudaenv(["use", "12.4", "--global", "--torch", "2.5"], env, tmp), 2, "--global")


@case
def bad_input_changes_nothing(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    expect_error(cudaenv(["use", "twelve"], env, tmp), 2, "SPEC")
    check(not (tmp / ".cudaenv").exists(), "no file written for a bad spec")
    broken = '# pinned\ncuda = "12.1"\n[frameworks\ntorch = "2.3"\n'
    (tmp / ".cudaenv").write_text(broken)
    expect_error(cudaenv(["use", "12.4"], env, tmp), 2, f"{tmp}/.cudaenv:3")
    check((tmp / ".cudaenv").read_text() == broken, "a malformed file is left as it was")
    expect_error(cudaenv(["current"], env, tmp), 2, f"{tmp}/.cudaenv:3")


@case
def a_version_not_installed_is_pinned_with_a_hint_and_install_fetches_it(tmp):
    from harness import mirror_server
    from synthetic_mirror import toolkit_release
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    toolkit_release(tmp / "mirror", "12.6.3", "12.6.85")
    proc = cudaenv(["use", "12.6"], env, tmp)
    check(proc.returncode == 0, f"pinning a version not installed only warns: {proc.stderr}")
    check("run: cudaenv install 12.6" in proc.stderr, f"names the install command: {proc.stderr}")
    expect_error(cudaenv(["current"], env, tmp), 3, "CUDA 12.6", "not installed")
    with mirror_server(tmp / "mirror") as (url, _):
        proc = cudaenv(["use", "12.6", "--install"], dict(env, CUDAENV_MIRROR=url), tmp)
    check(proc.returncode == 0, f"use --install exits 0: {proc.stderr}")
    check(cudaenv(["current"], env, tmp).stdout == f"12.6.3 (from {tmp}/.cudaenv)\n", "installed and active")


@case
def pinning_what_this_machines_driver_cannot_run_warns_and_still_writes(tmp):
    from harness import fixture_machine
    machine = fixture_machine("legacy-sysfs-kepler", tmp / "machines")  # driver 470.223.02
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root", CUDAENV_SYSROOT=machine)
    proc = cudaenv(["use", "12.4"], env, tmp)
    check(proc.returncode == 0, f"a warning, not a failure: {proc.returncode} {proc.stderr}")
    check("warning: this machine cannot run CUDA 12.4" in proc.stderr and "470" in proc.stderr,
          f"names the driver that is too old: {proc.stderr}")
    check((tmp / ".cudaenv").read_text() == 'cuda = "12.4"\n', "the pin is written for other machines")


@case
def a_release_the_database_does_not_know_is_refused_unless_forced(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    (tmp / ".cudaenv").write_text('cuda = "12.4"  # kept\n')
    for typo in ("12.14", "21.4", "12.4.999"):
        proc = cudaenv(["use", typo], env, tmp)
        expect_error(proc, 3, f"CUDA {typo} is not a release the database knows", "nothing was written")
        check("--force" in proc.stderr, f"the hint names --force: {proc.stderr}")
        check((tmp / ".cudaenv").read_text() == 'cuda = "12.4"  # kept\n', f"{typo}: the file is untouched")
    # nvcc's own version of a known release is known; --force pins what the database lacks.
    check(cudaenv(["use", "12.4.131"], env, tmp).returncode == 0, "nvcc 12.4.131 names CUDA 12.4.1")
    forced = cudaenv(["use", "12.14", "--force"], env, tmp)
    check(forced.returncode == 0 and 'cuda = "12.14"' in (tmp / ".cudaenv").read_text(),
          f"--force writes it: {forced.stderr}")


finish()
