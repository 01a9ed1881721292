"""What each command says applies in a directory, in one comparable form, for the cross-command
consistency test: an Answer holds the toolkit a command names (a prefix, NONE or NOT_INSTALLED),
the cuDNN it names and where it says the choice came from. Each reader runs the built binary as a
user would and reads only what the command prints."""

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness import BINARY

NONE = "(none)"
NOT_INSTALLED = "(not installed)"
UNREPORTED = "-"
TIMEOUT = 120


@dataclass
class Answer:
    toolkit: str                   # a prefix, NONE, NOT_INSTALLED, or "(error: …)"
    cudnn: str = UNREPORTED        # a cuDNN prefix, NONE, or UNREPORTED (the command never says)
    reason: str = UNREPORTED       # the source it names, normalised by Situation.reason_of
    detail: str = ""               # the raw fields, for the table


@dataclass
class Situation:
    """One directory and environment to ask every command about."""
    name: str
    cwd: Path
    env: dict
    project_file: Path | None = None  # the .cudaenv that should decide here
    library: str = "libcudart.so.12"  # the soname `why` is asked about

    def reason_of(self, text):
        """Where a command says its choice came from: the .cudaenv, CUDAENV_VERSION or the system."""
        if text is None or text == "":
            return UNREPORTED
        text = str(text)
        if ".cudaenv" in text:
            for part in text.replace("=", " ").replace("(", " ").replace(")", " ").split():
                if part.endswith(".cudaenv"):
                    return f"file {part}"
            return f"file? {text}"
        if "CUDAENV_VERSION" in text or text == "environment":
            return "CUDAENV_VERSION"
        return f"system ({text})"


def _run(args, situation, timeout=TIMEOUT, program=None):
    return subprocess.run([*(program or [BINARY]), *args], cwd=situation.cwd, env=situation.env,
                          capture_output=True, text=True, timeout=timeout)


def _short(text, limit=160):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _error_answer(proc, situation):
    """A command that failed: "not installed" when it says so, else the error itself."""
    err = proc.stderr
    if "is not installed" in err:
        return Answer(NOT_INSTALLED, detail=f"exit {proc.returncode}: {_short(err)}")
    if "none on PATH" in err or "no CUDA toolkit selected" in err:
        return Answer(NONE, detail=f"exit {proc.returncode}: {_short(err)}")
    return Answer(f"(error exit {proc.returncode})", detail=_short(err))


def _json(proc):
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return None


def _prefix_of_library_dir(directory):
    """The prefix a toolkit's or cuDNN's library directory belongs to (…/lib64, …/lib)."""
    path = Path(directory)
    return str(path.parent) if path.name in ("lib", "lib64") else str(path)


def _cudnn_on(ld_library_path):
    for entry in (ld_library_path or "").split(":"):
        if entry and any(name.startswith("libcudnn.so") for name in _listing(entry)):
            return _prefix_of_library_dir(entry)
    return NONE


def _listing(directory):
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _toolkit_from_shell(cuda_home, nvcc):
    """What a program run in that environment gets: CUDA_HOME, else the nvcc on PATH. A shell
    naming neither names no toolkit (UNREPORTED): builds then find whatever the system has
    (/usr/local/cuda), which the commands that name the system's toolkit report; a stale
    activation left in it still shows, and disagrees."""
    if cuda_home:
        return cuda_home
    if nvcc:
        return str(Path(nvcc).parent.parent)
    return UNREPORTED


# --- one reader per command -------------------------------------------------------------

def ask_list(s):
    proc = _run(["list", "--json"], s)
    data = _json(proc)
    if proc.returncode != 0 or data is None:
        return _error_answer(proc, s)
    active = data.get("active")
    if active is None:
        return Answer(NONE, detail="active=null")
    toolkit = active["path"] or NOT_INSTALLED
    return Answer(toolkit, reason=s.reason_of(active["source"]),
                  detail=f"active.path={active['path']!r} active.source={active['source']!r}")


def ask_current(s):
    proc = _run(["current", "--json"], s)
    data = _json(proc)
    if proc.returncode != 0 or data is None:
        return _error_answer(proc, s)
    source = data["file"] if data["source"] == "project_file" else data["source"]
    return Answer(data["prefix"] or NONE, cudnn=data["cudnn"] or NONE, reason=s.reason_of(source),
                  detail=f"prefix={data['prefix']!r} cudnn={data['cudnn']!r} source={data['source']!r} "
                         f"file={data['file']!r}")


def ask_doctor(s):
    proc = _run(["doctor", "--json"], s)
    data = _json(proc)
    if data is None:
        return _error_answer(proc, s)
    active = data.get("active_toolkit")
    notes = "; ".join(data.get("notes", []))
    missing = data.get("missing")
    if missing:
        return Answer(NOT_INSTALLED, reason=s.reason_of(missing["selected_by"]),
                      detail=f"missing={missing['message']!r}")
    if active is None:
        return Answer(NONE, detail=f"active_toolkit=null notes={_short(notes)!r}")
    return Answer(active["path"], reason=s.reason_of(active["selected_by"]),
                  detail=f"active_toolkit.path={active['path']!r} selected_by={active['selected_by']!r}"
                         + (f" notes={_short(notes)!r}" if notes else ""))


def ask_verify(s):
    proc = _run(["verify", "--json"], s)
    data = _json(proc)
    if data is None:  # exit 3 (not installed), or 7 before a report (a runtime-only prefix)
        runtime_only = re.search(r"CUDA \S+ in (/\S+) is runtime-only", proc.stderr)
        if runtime_only:  # it chose that toolkit, and says why it cannot build with it
            return Answer(runtime_only.group(1), detail=f"exit {proc.returncode}: {_short(proc.stderr)}")
        return _error_answer(proc, s)
    toolkit = data["toolkit"]
    cudnn = data.get("cudnn")
    cudnn_prefix = NONE if not cudnn else _prefix_of_library_dir(Path(cudnn["library"]).parent)
    return Answer(toolkit["path"], cudnn=cudnn_prefix, reason=s.reason_of(toolkit["selected_by"]),
                  detail=f"exit {proc.returncode} toolkit.path={toolkit['path']!r} "
                         f"selected_by={toolkit['selected_by']!r} cudnn.library="
                         f"{cudnn['library'] if cudnn else None!r}")


def ask_env(s):
    proc = _run(["env", "--shell", "json"], s)
    data = _json(proc)
    if proc.returncode != 0 or data is None:
        return _error_answer(proc, s)
    nvcc = _nvcc_on(data.get("PATH"))
    return Answer(_toolkit_from_shell(data.get("CUDA_HOME"), nvcc), cudnn=_cudnn_on(data.get("LD_LIBRARY_PATH")),
                  detail=f"CUDA_HOME={data.get('CUDA_HOME')!r} nvcc on PATH={nvcc!r}")


def _nvcc_on(path):
    for entry in (path or "").split(":"):
        candidate = Path(entry) / "nvcc"
        if entry and candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def ask_which(s):
    proc = _run(["which", "nvcc"], s)
    if proc.returncode == 0:
        nvcc = proc.stdout.strip()
        return Answer(str(Path(nvcc).parent.parent), detail=f"stdout={nvcc!r}")
    system = re.search(r"the system's toolkit (/\S+) \(", proc.stderr)
    if system:  # none on PATH, and it names the toolkit the builds here get
        return Answer(system.group(1), detail=f"exit {proc.returncode}: {_short(proc.stderr)}")
    marker = " as installed ("
    if marker in proc.stderr:  # "nvcc is not part of CUDA X as installed (PREFIX/bin)": names the toolkit
        bin_dir = proc.stderr.split(marker, 1)[1].split(")", 1)[0]
        return Answer(str(Path(bin_dir).parent), detail=f"exit {proc.returncode}: {_short(proc.stderr)}")
    runtime_only = re.search(r"here is runtime-only \((/\S+) came from a package index", proc.stderr)
    if runtime_only:  # the toolkit that applies has no nvcc, and no other is handed out: names it
        return Answer(runtime_only.group(1), detail=f"exit {proc.returncode}: {_short(proc.stderr)}")
    return _error_answer(proc, s)


SHOW = 'printf "%s\\n" "${CUDA_HOME-}" "${LD_LIBRARY_PATH-}" "$(command -v nvcc)"'


def ask_exec(s):
    proc = _run(["exec", "--", "/bin/sh", "-c", SHOW], s)
    if proc.returncode != 0:
        return _error_answer(proc, s)
    home, libraries, nvcc = (proc.stdout.split("\n") + ["", "", ""])[:3]
    return Answer(_toolkit_from_shell(home, nvcc), cudnn=_cudnn_on(libraries),
                  detail=f"CUDA_HOME={home!r} nvcc={nvcc!r}")


def ask_hook(s):
    """The prompt hook's answer: bash evaluates hook-env's output, as the hook does at a prompt."""
    hook = _run(["hook-env", "--shell", "bash"], s)
    if hook.returncode != 0:
        return _error_answer(hook, s)
    shell = subprocess.run(["/bin/bash", "--norc", "--noprofile", "-c", f"eval \"$1\"\n{SHOW}", "bash",
                            hook.stdout], cwd=s.cwd, env=s.env, capture_output=True, text=True, timeout=TIMEOUT)
    home, libraries, nvcc = (shell.stdout.split("\n") + ["", "", ""])[:3]
    problem = _short(hook.stderr)
    if "is not installed" in hook.stderr and not home:
        return Answer(NOT_INSTALLED, detail=f"stderr={problem!r} CUDA_HOME={home!r}")
    return Answer(_toolkit_from_shell(home, nvcc), cudnn=_cudnn_on(libraries),
                  detail=f"CUDA_HOME={home!r} nvcc={nvcc!r}" + (f" stderr={problem!r}" if problem else ""))


def ask_scan(s):
    proc = _run(["scan", "--json"], s)
    data = _json(proc)
    if data is None:
        return _error_answer(proc, s)
    # The toolkit it names, and the cuDNN directory among the roots it read (a prefix without bin/).
    roots = [r for r in data["roots"] if "-packages" not in r]
    cudnn = [r for r in roots if not (Path(r).parent / "bin").is_dir()
             and any(n.startswith("libcudnn.so") for n in _listing(r))]
    return Answer(data["toolkit"] or NONE,
                  cudnn=_prefix_of_library_dir(cudnn[0]) if cudnn else NONE,
                  detail=f"toolkit={data['toolkit']!r} roots={data['roots']!r}")


def _why(s, library):
    """(the why report, or None; what was read)."""
    proc = _run(["why", library, "--json"], s)
    data = _json(proc)
    if data is None:
        return None, f"{library}: exit {proc.returncode}: {_short(proc.stderr)}"
    loads = data.get("loads")
    return data, (f"{library}: loads.path={loads['path'] if loads else None!r} "
                  f"mismatch={_short(data.get('mismatch', ''))!r}")


def _unflagged_copy(data, applied_prefixes):
    """A copy that loads from another toolkit or cuDNN than the one why says applies, with no
    mismatch flagged: why's loader and its decision would disagree. None when coherent."""
    loads = data.get("loads")
    if not loads or data.get("mismatch"):
        return None
    prefix = _prefix_of_library_dir(Path(loads["path"]).parent)
    if prefix in applied_prefixes:
        return None
    if (Path(prefix) / "bin").is_dir() or "/cudnn/" in prefix:  # a toolkit's or a store's cuDNN
        return f"(loads {prefix} unflagged)"
    return None


def ask_why(s):
    """What why says applies here (its `applies`), checked against what its simulated loader
    picks: a copy from another toolkit or cuDNN than that one must come with a mismatch."""
    data, read = _why(s, s.library)
    if data is None:
        return Answer("(error)", detail=read)
    cudnn_data, cudnn_read = _why(s, "libcudnn.so.9")
    applies = data["applies"]
    if applies["missing"]:
        return Answer(NOT_INSTALLED, reason=s.reason_of(applies["source"]),
                      detail=f"applies.missing={applies['missing']!r}; {read}")
    applied = {p for p in (applies["toolkit"], applies["cudnn"]) if p}
    toolkit = _unflagged_copy(data, applied) or applies["toolkit"] or NONE
    cudnn = applies["cudnn"] or NONE
    if cudnn_data is not None:
        cudnn = _unflagged_copy(cudnn_data, applied) or cudnn
    source = applies["source"]
    return Answer(toolkit, cudnn=cudnn,
                  reason=s.reason_of(source if ".cudaenv" in source or "CUDAENV_VERSION" in source
                                     else "system"),
                  detail=f"applies={applies!r}; {read}; {cudnn_read}")


COMMANDS = {
    "list --json": ask_list,
    "current --json": ask_current,
    "doctor --json": ask_doctor,
    "verify --json": ask_verify,
    "env --shell json": ask_env,
    "which nvcc": ask_which,
    "exec -- sh": ask_exec,
    "hook-env (eval)": ask_hook,
    "scan --json": ask_scan,
    "why --json": ask_why,
}


def comparable_cudnn(value):
    """cuDNN as `current` names it (a version) and as the others do (a prefix …/9.1.0-cuda12)."""
    return Path(value).name.split("-cuda")[0] if value.startswith("/") else value


def machine_view(situation, value):
    """A host path below the situation's CUDAENV_SYSROOT as the machine's path: commands that read
    the machine (list, doctor, verify) name /usr/local/cuda-13.0, those that set variables for a
    process here name where this host reaches it; both name the same toolkit."""
    root = situation.env.get("CUDAENV_SYSROOT")
    if root and value.startswith(root.rstrip("/") + "/"):
        return value[len(root.rstrip("/")):]
    return value


def disagreements(situation, answers, expected):
    """Cells that differ from what a user expects here. expected: {toolkit, cudnn, reason}, where
    a value of None means "whatever the commands agree on" (the most common answer)."""
    def wanted(key, values):
        if expected.get(key) is not None:
            return expected[key]
        counted = {}
        for value in values:
            counted[value] = counted.get(value, 0) + 1
        return max(counted, key=counted.get) if counted else None

    for answer in answers.values():
        answer.toolkit = machine_view(situation, answer.toolkit)
        answer.cudnn = machine_view(situation, answer.cudnn)
    if expected.get("toolkit"):
        expected = dict(expected, toolkit=machine_view(situation, expected["toolkit"]))
    bad = []
    toolkit = wanted("toolkit", [a.toolkit for a in answers.values() if a.toolkit != UNREPORTED])
    reported_cudnn = [comparable_cudnn(a.cudnn) for a in answers.values() if a.cudnn != UNREPORTED]
    cudnn = comparable_cudnn(expected["cudnn"]) if expected.get("cudnn") else wanted("cudnn", reported_cudnn)
    reasons = [a.reason for a in answers.values() if a.reason != UNREPORTED]
    reason = wanted("reason", reasons)
    for command, answer in answers.items():
        problems = []
        if answer.toolkit != UNREPORTED and answer.toolkit != toolkit:
            problems.append(f"toolkit {answer.toolkit} (expected {toolkit})")
        if answer.cudnn != UNREPORTED and comparable_cudnn(answer.cudnn) != cudnn:
            problems.append(f"cuDNN {answer.cudnn} (expected {cudnn})")
        if answer.reason != UNREPORTED and reason is not None and not _same_reason(answer.reason, reason):
            problems.append(f"reason {answer.reason} (expected {reason})")
        if problems:
            bad.append((command, "; ".join(problems)))
    return toolkit, cudnn, reason, bad


def _same_reason(given, wanted):
    """Every system origin ("nvcc on PATH", "/usr/local/cuda") is the system's answer; the wording
    of the origin is compared through the toolkit path, not here."""
    if wanted.startswith("system") and given.startswith("system"):
        return True
    return given == wanted


def table(situation, answers, expected_line, bad):
    lines = [f"situation {situation.name}: {expected_line}"]
    width = max(len(c) for c in answers)
    flagged = dict(bad)
    for command, answer in answers.items():
        mark = "DISAGREES" if command in flagged else "ok"
        lines.append(f"  {command:<{width}}  {mark:<9}  toolkit={answer.toolkit}  cudnn={answer.cudnn}  "
                     f"reason={answer.reason}")
        lines.append(f"  {'':<{width}}             read: {answer.detail}")
        if command in flagged:
            lines.append(f"  {'':<{width}}             why:  {flagged[command]}")
    return "\n".join(lines)
