"""docs/user-guide.md tells the truth: every example in a ```console block runs, in a sandbox, and
prints what the guide shows (the markup is described in the guide's "How the examples are
checked"); the command table has one row per command of `cudaenv --help`; every CUDAENV_*
variable the sources read is documented; relative links in docs/*.md point at files that exist."""

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from harness import BINARY, case, check, clean_env, finish, fixture_machine, mirror_server
from synthetic_mirror import cudnn_release, toolkit_release

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "user-guide.md"
# The sandbox's mirror: two toolkits and a cuDNN, as NVIDIA lays them out.
MIRROR_RELEASES = {"12.1.1": "12.1.105", "12.4.1": "12.4.131"}
MACHINE = "dgx-h100-580"


def examples(text):
    """[[(line number, command, expected lines)] per ```console block], in order. A block may be
    indented (inside a list item): its lines lose the fence's indentation."""
    blocks, current, indent = [], None, ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if current is None:
            if stripped == "```console":
                indent = line[:len(line) - len(line.lstrip())]
                current = []
                blocks.append(current)
            continue
        if stripped == "```":
            current = None
            continue
        line = line[len(indent):] if line.startswith(indent) else line.lstrip()
        if line.startswith("$ "):
            current.append((number, line[2:], []))
        elif current:
            current[-1][2].append(line)
    return blocks


def matches(expected, actual):
    """`...` in an expected line matches any text; a line that is only `...` any number of lines."""
    if not expected:
        return not actual
    head = expected[0]
    if head == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("...")) + r"\Z"
    return re.match(pattern, actual[0]) is not None and matches(expected[1:], actual[1:])


class Session:
    """One bash process per block: each command, then the prompt hook if one is installed (as an
    interactive shell runs PROMPT_COMMAND before the next prompt), then a marker with the status."""

    def __init__(self, env, cwd):
        self.mark = f"@@{uuid.uuid4().hex}@@"
        self.proc = subprocess.Popen(["bash", "--norc", "--noprofile"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)

    def run(self, command):
        self.proc.stdin.write(f"{command}\n__status=$?; eval \"${{PROMPT_COMMAND:-:}}\"; "
                              f"printf '\\n{self.mark} %d\\n' \"$__status\"\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"bash ended during: {command}")
            if line.startswith(self.mark):
                status = int(line.split()[1])
                break
            lines.append(line.rstrip("\n"))
        if lines and lines[-1] == "":
            lines.pop()  # the newline before the marker
        return status, lines

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def sandbox(tmp, url):
    home = tmp / "home"
    (home / "src" / "my-model").mkdir(parents=True)
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "cudaenv").symlink_to(BINARY)
    # Where `cmake --install` with PREFIX=~/.local (scripts/setup) puts the direnv snippet.
    share = home / ".local" / "share" / "cudaenv"
    share.mkdir(parents=True)
    shutil.copyfile(REPO / "shell" / "cudaenv.direnvrc", share / "cudaenv.direnvrc")
    machine = fixture_machine(MACHINE, tmp / "machine")
    env = clean_env(home, PATH=f"{bindir}:/usr/bin:/bin", CUDAENV_MIRROR=url, CUDAENV_SYSROOT=machine,
                    TERM="dumb", PS1="$ ")
    return env, home


def shown(lines, home):
    """The output as the guide writes it: the sandbox's home directory as ~, no colour codes."""
    return [re.sub(r"\x1b\[[0-9;]*m", "", line).replace(str(home), "~") for line in lines]


@case
def every_console_example_prints_what_the_guide_shows(tmp):
    blocks = examples(GUIDE.read_text())
    check(sum(len(block) for block in blocks) >= 10, f"the guide has its examples: {len(blocks)} blocks")
    toolkits = tmp / "mirror"
    for release, nvcc in MIRROR_RELEASES.items():
        toolkit_release(toolkits, release, nvcc)
    cudnn_release(toolkits, "9.1.0", "9.1.0.70")
    with mirror_server(toolkits) as (url, _):
        env, home = sandbox(tmp, url)
        # Blocks share the sandbox in order, as a reader following the guide would.
        for block in blocks:
            session = Session(env, home / "src" / "my-model")
            try:
                for number, command, expected in block:
                    status_wanted = 0
                    if expected and re.fullmatch(r"\[exit \d+\]", expected[-1]):
                        status_wanted = int(expected[-1][6:-1])
                        expected = expected[:-1]
                    status, output = session.run(command)
                    output = shown(output, home)
                    check(status == status_wanted, f"user-guide.md:{number}: `{command}` exited {status}, "
                                                   f"the guide says {status_wanted}:\n" + "\n".join(output))
                    check(matches(expected, output), f"user-guide.md:{number}: `{command}` printed\n"
                                                     + "\n".join(output) + "\n--- the guide shows\n"
                                                     + "\n".join(expected))
            finally:
                session.close()


def help_commands():
    out = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=60).stdout
    listing = out.split("Subcommands:", 1)[1] if "Subcommands:" in out else ""
    return [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line.split()]


def table_commands(text):
    section = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\| `cudaenv ([a-z][a-z-]*)", section, re.MULTILINE)]


@case
def the_command_table_has_a_row_for_every_command(tmp):
    documented = table_commands(GUIDE.read_text())
    commands = help_commands()
    check(commands, "cudaenv --help lists its commands")
    missing = [c for c in commands if c not in documented]
    stale = [c for c in documented if c not in commands]
    check(not missing, f"commands without a row in the user guide's table: {missing}")
    check(not stale, f"rows for commands cudaenv does not have: {stale}")


@case
def every_variable_cudaenv_reads_is_documented(tmp):
    read = set()
    for source in (REPO / "src").rglob("*.[ch]pp"):
        text = source.read_text(errors="replace")
        read.update(re.findall(r'(?:get_nonempty|get|getenv)\(\s*"(CUDAENV_[A-Z_]+|NO_COLOR)"', text))
    for source in (REPO / "shims").rglob("*.[ch]pp"):
        read.update(re.findall(r'"(CUDAENV_[A-Z_]+)"', source.read_text(errors="replace")))
    check({"CUDAENV_ROOT", "CUDAENV_MIRROR", "CUDAENV_VERSION"} <= read, f"the scan finds the variables: {read}")
    guide = GUIDE.read_text()
    variables = guide.split("## Environment variables", 1)[-1].split("\n## ", 1)[0]
    undocumented = sorted(name for name in read if f"`{name}`" not in variables)
    check(not undocumented, f"variables cudaenv reads that the guide's table does not name: {undocumented}")


@case
def relative_links_in_the_docs_point_at_files_that_exist(tmp):
    for page in sorted((REPO / "docs").glob("*.md")):
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            check(path.exists(), f"{page.relative_to(REPO)}: the link {target} points at nothing")


finish()
