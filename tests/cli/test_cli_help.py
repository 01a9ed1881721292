#!/usr/bin/env python3
"""Mistakes at the command line and help: a mistyped command or flag is named with the nearest
one (exit 2), `cudaenv help [COMMAND]` prints what `COMMAND --help` does, `cudaenv` alone lists the
commands, and the man page (`cudaenv man`, installed by CMake) lists every command."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness import case, check, clean_env, expect_error, finish, run  # noqa: E402


def commands_of(env):
    """The commands `cudaenv` alone lists: the table as the program reads it, not a list kept here."""
    shown = run([], env, check_exit=0).stdout
    block = shown.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


@case
def no_arguments_prints_the_command_list(tmp):
    env = clean_env(tmp)
    proc = run([], env, check_exit=0)
    check(proc.stderr == "", f"nothing on stderr: {proc.stderr!r}")
    commands = commands_of(env)
    for name in ("install", "use", "list", "current", "help", "completion"):
        check(name in commands, f"{name} in the short help: {proc.stdout!r}")
    for hidden in ("man", "__complete"):
        check(hidden not in commands, f"hidden {hidden} not listed: {proc.stdout!r}")
    check("cudaenv help COMMAND" in proc.stdout, "points at `cudaenv help COMMAND`")
    # Flags but no command: a usage error that says so.
    expect_error(run(["--quiet"], env), 2, "no command given")


@case
def mistyped_command_names_the_nearest(tmp):
    env = clean_env(tmp)
    proc = run(["instal", "12.4"], env)
    expect_error(proc, 2, "unknown command 'instal'")
    check("did you mean `install`?" in proc.stderr, f"suggests install: {proc.stderr!r}")
    proc = run(["verfy"], env)
    expect_error(proc, 2, "unknown command 'verfy'")
    check("`verify`" in proc.stderr, f"suggests verify: {proc.stderr!r}")
    # Nothing near: no guess, but the way to the list.
    proc = run(["frobnicate"], env)
    expect_error(proc, 2, "unknown command 'frobnicate'")
    check("did you mean" not in proc.stderr, f"no far-fetched guess: {proc.stderr!r}")
    check("cudaenv help" in proc.stderr, f"points at cudaenv help: {proc.stderr!r}")


@case
def mistyped_subcommand_of_a_group(tmp):
    proc = run(["mirror", "creat", "dir"], clean_env(tmp))
    expect_error(proc, 2, "unknown command 'creat'", "cudaenv mirror")
    check("`cudaenv mirror create`" in proc.stderr, f"suggests mirror create: {proc.stderr!r}")
    proc = run(["mirror"], clean_env(tmp))
    expect_error(proc, 2, "cudaenv mirror", "create")


@case
def mistyped_flag_names_the_nearest_and_changes_nothing(tmp):
    env = clean_env(tmp, CUDAENV_ROOT=tmp / "root")
    proc = run(["install", "12.4.1", "--mirorr", "http://127.0.0.1:9/"], env)
    expect_error(proc, 2, "unknown flag '--mirorr'", "cudaenv install")
    check("did you mean `--mirror`?" in proc.stderr, f"suggests --mirror: {proc.stderr!r}")
    check("cudaenv help install" in proc.stderr, f"points at install's help: {proc.stderr!r}")
    check(not (tmp / "root").exists(), "nothing was installed or created")
    proc = run(["list", "--jsn"], env)
    expect_error(proc, 2, "unknown flag '--jsn'")
    check("`--json`" in proc.stderr, f"suggests --json: {proc.stderr!r}")
    # With a value attached, the flag's name alone is reported.
    proc = run(["install", "12.4.1", "--component=minimal"], env)
    expect_error(proc, 2, "unknown flag '--component'")
    check("`--components`" in proc.stderr, f"suggests --components: {proc.stderr!r}")


@case
def front_program_commands_answer_the_same(tmp):
    # `current` runs in the small front program, `list` in the full one: the same answers.
    env = clean_env(tmp)
    proc = run(["current", "--jsn"], env)
    expect_error(proc, 2, "unknown flag '--jsn'", "cudaenv current")
    check("did you mean `--json`?" in proc.stderr, f"suggests --json: {proc.stderr!r}")
    proc = run(["hook-env", "--shel", "bash"], env)
    expect_error(proc, 2, "unknown flag '--shel'")
    check("`--shell`" in proc.stderr, f"suggests --shell: {proc.stderr!r}")


@case
def mistyped_words_are_shown_escaped(tmp):
    proc = run(["\x1b]0;owned\x07instal"], clean_env(tmp))
    expect_error(proc, 2, "unknown command")
    check("\x1b" not in proc.stderr and "\x07" not in proc.stderr,
          f"no terminal control characters echoed: {proc.stderr!r}")


@case
def help_command_prints_what_help_flag_prints(tmp):
    env = clean_env(tmp)
    top = run(["help"], env, check_exit=0).stdout
    check(top == run(["--help"], env, check_exit=0).stdout, "`help` == `--help`")
    for command in commands_of(env):
        by_help = run(["help", command], env, check_exit=0).stdout
        by_flag = run([command, "--help"], env, check_exit=0).stdout
        check(by_help == by_flag, f"`help {command}` == `{command} --help`:\n{by_help}\n---\n{by_flag}")
        check(f"cudaenv {command}" in by_help, f"help of {command} names it: {by_help!r}")
    nested = run(["help", "mirror", "create"], env, check_exit=0).stdout
    check(nested == run(["mirror", "create", "--help"], env, check_exit=0).stdout,
          "`help mirror create` == `mirror create --help`")
    check("--cuda" in nested, f"mirror create's flags shown: {nested!r}")


@case
def help_for_an_unknown_command(tmp):
    proc = run(["help", "instal"], clean_env(tmp))
    expect_error(proc, 2, "unknown command 'instal'")
    check("did you mean `install`?" in proc.stderr, f"suggests install: {proc.stderr!r}")
    check(proc.stdout == "", f"no help printed: {proc.stdout!r}")


def render_man(page, env):
    """The page as man-db (or groff) renders it, as plain text."""
    if shutil.which("man"):
        proc = subprocess.run(["man", "-l", "-P", "cat", str(page)], capture_output=True, text=True,
                              env={**env, "MANWIDTH": "200", "MAN_KEEP_FORMATTING": ""}, timeout=60)
    else:
        proc = subprocess.run(["groff", "-man", "-Tutf8", "-P", "-cbou", str(page)],
                              capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"the page renders: {proc.stderr!r}")
    check("warning" not in proc.stderr, f"renders without warnings: {proc.stderr!r}")
    return re.sub(r".\x08", "", proc.stdout)


@case
def man_page_lists_every_command(tmp):
    if not (shutil.which("man") or shutil.which("groff")):
        print("skip: neither man nor groff here (scripts/deps --test installs them)")
        return
    env = clean_env(tmp)
    page = tmp / "cudaenv.1"
    page.write_text(run(["man"], env, check_exit=0).stdout)
    text = render_man(page, env)
    check("NAME" in text and "SYNOPSIS" in text and "EXIT STATUS" in text, f"sections: {text[:400]!r}")
    for command in commands_of(env):
        check(re.search(rf"^\s+cudaenv {re.escape(command)}\b", text, re.M),
              f"the man page has a section for {command}")
    check("--mirror" in text and "--quiet" in text, "flags are listed")
    check("CUDAENV_ROOT" in text, "the variables are listed")


def cmake_install(build, prefix):
    proc = subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0, f"cmake --install: {proc.stderr}")
    return proc


def installed_cudaenv_runs_its_helpers(tmp, prefix):
    """The installed front program, started through PATH from another directory, runs the full
    program (`list`, `mirror --help`: commands only it has) and the full program finds the shim
    (`rehash` places links to it)."""
    env = clean_env(tmp, PATH=f"{prefix}/bin:/usr/bin:/bin", CUDAENV_ROOT=tmp / "data")
    listed = subprocess.run(["cudaenv", "list"], cwd="/", env=env, capture_output=True, text=True, timeout=60)
    check(listed.returncode == 0, f"cudaenv list through the installed front: {listed.stderr!r}")
    (tmp / "data/toolkits/12.4.1/bin").mkdir(parents=True)
    (tmp / "data/toolkits/12.4.1/bin/nvcc").write_text("#!/bin/sh\n")
    (tmp / "data/toolkits/12.4.1/bin/nvcc").chmod(0o755)
    rehash = subprocess.run(["cudaenv", "rehash"], cwd="/", env=env, capture_output=True, text=True, timeout=60)
    check(rehash.returncode == 0, f"cudaenv rehash: {rehash.stderr!r}")
    shim = tmp / "data/shims/nvcc"
    return os.path.realpath(shim) if shim.is_symlink() else None


@case
def install_puts_the_man_page_and_completions_where_tools_look(tmp):
    build = Path(os.environ["CUDAENV_BIN"]).resolve().parent.parent
    if not (build / "cmake_install.cmake").is_file() or not shutil.which("cmake"):
        print(f"skip: no CMake build tree at {build}")
        return
    prefix = tmp / "prefix"
    cmake_install(build, prefix)
    layout = ["bin/cudaenv", "libexec/cudaenv/cudaenv-full", "libexec/cudaenv/cudaenv-shim",
              "share/man/man1/cudaenv.1", "share/bash-completion/completions/cudaenv",
              "share/zsh/site-functions/_cudaenv", "share/fish/vendor_completions.d/cudaenv.fish",
              "share/cudaenv/cudaenv.bash", "share/cudaenv/cudaenv.zsh", "share/cudaenv/cudaenv.fish",
              "share/cudaenv/cudaenv.direnvrc",
              "share/doc/cudaenv/LICENSE", "share/doc/cudaenv/THIRD_PARTY_NOTICES"]
    for installed in layout:
        check((prefix / installed).is_file(), f"{installed} installed")
    for program in layout[:3]:
        check(os.access(prefix / program, os.X_OK), f"{program} is executable")
    hook = prefix / "share/cudaenv/cudaenv.bash"
    if hook.is_file():
        check(hook.read_text() == (Path(__file__).parents[2] / "shell/cudaenv.bash").read_text(),
              "the bash hook installed is the project's")
    shim = installed_cudaenv_runs_its_helpers(tmp, prefix)
    check(shim == str(prefix / "libexec/cudaenv/cudaenv-shim"), f"the shims run the installed shim: {shim}")
    if shutil.which("man") and (prefix / "share/man/man1/cudaenv.1").is_file():
        # man-db finds pages beside a bin/ on PATH: `man cudaenv` works with no MANPATH.
        env = clean_env(tmp, PATH=f"{prefix}/bin:/usr/bin:/bin")
        found = subprocess.run(["man", "-w", "cudaenv"], capture_output=True, text=True, env=env,
                               timeout=60)
        check(found.stdout.strip() == str(prefix / "share/man/man1/cudaenv.1"),
              f"man -w cudaenv: {found.stdout!r} {found.stderr!r}")


@case
def a_non_default_libexec_directory_is_where_the_front_program_looks(tmp):
    # CMAKE_INSTALL_LIBEXECDIR=lib/helpers: the install rules put the helpers there and the front
    # program is compiled with that path relative to bin/ (configure only: a second build of
    # every object would take minutes; the default layout's case above runs the installed
    # programs, which find each other through the same derived path).
    build = Path(os.environ["CUDAENV_BIN"]).resolve().parent.parent
    if not (build / "CMakeCache.txt").is_file() or not shutil.which("cmake"):
        print(f"skip: no CMake build tree at {build}")
        return
    source = Path(__file__).resolve().parents[2]
    other = tmp / "build"
    proc = subprocess.run(["cmake", "-S", str(source), "-B", str(other), "-DCUDAENV_TESTS=OFF",
                           "-DCMAKE_INSTALL_LIBEXECDIR=lib/helpers", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0, f"configure with CMAKE_INSTALL_LIBEXECDIR=lib/helpers: {proc.stderr[-2000:]}")
    if proc.returncode != 0:
        return
    commands = json.loads((other / "compile_commands.json").read_text())
    paths = [c["command"] for c in commands if c["file"].endswith("src/core/paths.cpp")]
    check(paths and '-DCUDAENV_COMPANION_FROM_BIN=\\"../lib/helpers/cudaenv\\"' in paths[0],
          f"the front looks in ../lib/helpers/cudaenv from bin/: {paths}")
    rules = (other / "cmake_install.cmake").read_text()
    for helper in ("cudaenv-full", "cudaenv-shim"):
        check(f'file(INSTALL DESTINATION "${{CMAKE_INSTALL_PREFIX}}/lib/helpers/cudaenv" TYPE EXECUTABLE FILES "{other}/src/{helper}")'
              in rules, f"{helper} is installed in lib/helpers/cudaenv")


finish()
