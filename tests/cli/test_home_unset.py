"""HOME unset or empty (cron, `env -i`, some containers): cudaenv takes the home directory from the
passwd entry of the user it runs as, and never writes below the current directory instead.

Run as root, the commands run as the unprivileged user 65534 (home /nonexistent in Debian's passwd)
from a scratch directory that user may write: its data and config directories fall back to the
passwd home, whose path the errors name, and nothing appears in the scratch directory."""

import os
import pwd
import subprocess

from harness import BINARY, SKIP, case, check, finish

UID = 65534

if os.geteuid() != 0:
    print("skip: switching to an unprivileged user with a known passwd home needs root")
    raise SystemExit(SKIP)
try:
    pwd.getpwuid(UID)
except KeyError:
    print(f"skip: no passwd entry for uid {UID}")
    raise SystemExit(SKIP)


def as_other_user():
    os.setgroups([])
    os.setgid(UID)
    os.setuid(UID)


def cudaenv(args, env, cwd):
    return subprocess.run([BINARY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60,
                          preexec_fn=as_other_user)


def base_env():
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@case
def without_home_the_passwd_home_is_used_and_the_working_directory_stays_empty(tmp):
    home = pwd.getpwuid(UID).pw_dir
    scratch = tmp / "scratch"
    scratch.mkdir()
    os.chmod(tmp, 0o755)
    os.chown(scratch, UID, UID)
    for variant, env in (("HOME unset", base_env()), ("HOME empty", dict(base_env(), HOME=""))):
        use = cudaenv(["use", "12.1", "--global"], env, scratch)
        check(use.returncode != 0 and f"{home}/.config/cudaenv" in use.stderr,
              f"{variant}: use --global writes to the passwd home's config: {use.returncode} {use.stderr!r}")
        rehash = cudaenv(["rehash"], env, scratch)
        check(f"{home}/.local/share/cudaenv" in rehash.stdout + rehash.stderr,
              f"{variant}: rehash uses the passwd home's data root: {rehash.stdout!r} {rehash.stderr!r}")
        cudaenv(["list"], env, scratch)
        cudaenv(["hook-env", "--shell", "bash"], env, scratch)
        left = sorted(p.name for p in scratch.iterdir())
        check(left == [], f"{variant}: nothing created in the working directory: {left}")
    # XDG variables still take precedence; only the one left unset falls back.
    config = tmp / "config"
    config.mkdir()
    os.chown(config, UID, UID)
    use = cudaenv(["use", "12.1", "--global"], dict(base_env(), XDG_CONFIG_HOME=str(config)), scratch)
    check(use.returncode == 0 and (config / "cudaenv" / "config.toml").is_file(),
          f"XDG_CONFIG_HOME is honoured without HOME: {use.stderr!r}")
    rehash = cudaenv(["rehash"], dict(base_env(), XDG_CONFIG_HOME=str(config)), scratch)
    check(f"{home}/.local/share/cudaenv" in rehash.stdout + rehash.stderr,
          f"the data root alone falls back: {rehash.stderr!r}")
    check(sorted(p.name for p in scratch.iterdir()) == [], "still nothing in the working directory")


finish()
