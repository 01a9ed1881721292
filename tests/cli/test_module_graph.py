#!/usr/bin/env python3
"""The module graph is a checked fact: scripts/check-includes, run on a copy of the tree, passes
on the tree as it is and fails, naming file:line, the crossing and the fix, on each kind of
crossing planted in the copy — an include the graph does not allow, a link it does not allow or a
declared use left unlinked, a use nothing uses, a cycle, an undeclared folder, a file built in
another module's target, docs/architecture.md disagreeing with the graph, a citation of the old
design file, and a built library calling into a module its own does not use."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness import case, check, finish  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "scripts" / "check-includes"


def copy_tree(tmp):
    """What the checker reads: src/, shims/ and docs/, copied."""
    copy = tmp / "clone"
    for part in ("src", "shims", "docs"):
        shutil.copytree(REPO / part, copy / part)
    return copy


def run_checker(root, *args):
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root), *args],
                          capture_output=True, text=True, timeout=120)


def expect_failure(root, *needles):
    proc = run_checker(root)
    check(proc.returncode == 1, f"exit {proc.returncode}, expected 1:\n{proc.stdout}{proc.stderr}")
    for needle in needles:
        check(needle in proc.stdout, f"{needle!r} not in the report:\n{proc.stdout}")
    return proc.stdout


def edit(path, old, new):
    text = path.read_text()
    check(old in text, f"{old!r} in {path} (the test's anchor moved?)")
    path.write_text(text.replace(old, new, 1))


def append_line(path, line):
    """Appends `line`; returns its line number."""
    text = path.read_text()
    path.write_text(text + ("" if text.endswith("\n") else "\n") + line + "\n")
    return len(path.read_text().splitlines())


@case
def the_tree_as_it_is_passes(tmp):
    proc = run_checker(copy_tree(tmp))
    check(proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    check(re.search(r"check-includes: \d+ modules, \d+ files, \d+ links.*: 0 problems", proc.stdout),
          f"the summary line: {proc.stdout!r}")


@case
def an_include_upward_fails_naming_file_line_and_fix(tmp):
    root = copy_tree(tmp)
    line = append_line(root / "src/core/text.cpp", '#include "cli/app.hpp"')
    expect_failure(root, f"src/core/text.cpp:{line}: module core includes cli/app.hpp of "
                                  "module cli", "fix:", "[modules.core] uses")


@case
def the_fast_path_cannot_include_the_installer(tmp):
    # activate may use the store (install/store.hpp), not the rest of install: the front program
    # and the shim link the store alone.
    root = copy_tree(tmp)
    line = append_line(root / "src/activate/here.cpp", '#include "install/installer.hpp"')
    expect_failure(root, f"src/activate/here.cpp:{line}: module activate includes "
                         "install/installer.hpp of module install")


@case
def a_shim_include_of_cli_fails(tmp):
    root = copy_tree(tmp)
    line = append_line(root / "shims/shim_main.cpp", '#include "cli/terminal.hpp"')
    expect_failure(root, f"shims/shim_main.cpp:{line}: module shim includes cli/terminal.hpp")


@case
def a_link_the_graph_forbids_fails(tmp):
    root = copy_tree(tmp)
    edit(root / "src/CMakeLists.txt",
         "target_link_libraries(cudaenv_activate PUBLIC cudaenv_core",
         "target_link_libraries(cudaenv_activate PUBLIC cudaenv_install cudaenv_core")
    expect_failure(root, "cudaenv_activate links cudaenv_install, but src/module-graph.toml does "
                         "not let activate use install")


@case
def a_declared_use_left_unlinked_fails(tmp):
    root = copy_tree(tmp)
    edit(root / "src/CMakeLists.txt",
         "target_link_libraries(cudaenv_resolve PUBLIC cudaenv_manifest cudaenv_probe)",
         "target_link_libraries(cudaenv_resolve PUBLIC cudaenv_manifest)")
    expect_failure(root, "cudaenv_resolve reaches no link to cudaenv_probe",
                   "fix: add cudaenv_probe to target_link_libraries(cudaenv_resolve")


@case
def a_file_built_in_another_modules_target_fails(tmp):
    root = copy_tree(tmp)
    edit(root / "src/CMakeLists.txt", "  install/writable.cpp)",
         "  install/writable.cpp\n  install/cache.cpp)")
    expect_failure(root, "cudaenv_store builds src/install/cache.cpp, which src/module-graph.toml "
                         "puts in module install")


@case
def a_use_nothing_uses_fails(tmp):
    root = copy_tree(tmp)
    edit(root / "src/module-graph.toml", 'target = "cudaenv_probe"\nuses = ["core"]',
         'target = "cudaenv_probe"\nuses = ["core", "fetch"]')
    expect_failure(root, '[modules.probe] uses "fetch", but no file of probe includes fetch')


@case
def a_cycle_fails(tmp):
    root = copy_tree(tmp)
    edit(root / "src/module-graph.toml", 'target = "cudaenv_core"\nuses = []',
         'target = "cudaenv_core"\nuses = ["probe"]')
    append_line(root / "src/core/text.cpp", '#include "probe/facts.hpp"')
    expect_failure(root, "the uses form a cycle: ")


@case
def a_folder_in_no_module_fails(tmp):
    root = copy_tree(tmp)
    (root / "src/telemetry").mkdir()
    (root / "src/telemetry/send.cpp").write_text('#include "core/text.hpp"\n')
    expect_failure(root, 'src/telemetry/: sources in no module of src/module-graph.toml: declare '
                         '[modules.NAME] with folder = "src/telemetry"')


@case
def the_documented_graph_must_match(tmp):
    root = copy_tree(tmp)
    doc = root / "docs/architecture.md"
    edit(doc, "| scan | `src/scan/` | `cudaenv_scan` | core, manifest |",
         "| scan | `src/scan/` | `cudaenv_scan` | core |")
    expect_failure(root, "docs/architecture.md: its module graph disagrees with "
                         "src/module-graph.toml", "scripts/check-includes --write-docs")
    # --write-docs writes the part back from the graph, and the check then passes.
    proc = run_checker(root, "--write-docs")
    check(proc.returncode == 0, f"--write-docs then passes:\n{proc.stdout}")
    check("| scan | `src/scan/` | `cudaenv_scan` | core, manifest |" in doc.read_text(),
          "the row is written back")


@case
def every_folder_has_a_row_in_the_architecture_table(tmp):
    root = copy_tree(tmp)
    doc = root / "docs/architecture.md"
    text = doc.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `src/export/` |"))
    doc.write_text(text.replace(row + "\n", ""))
    expect_failure(root, "docs/architecture.md: the table of folders has no row for `src/export/`")


@case
def a_citation_of_the_missing_design_file_fails(tmp):
    # The citations are built from parts: this file is checked for them too.
    old_name, section = "DESIGN" + ".md", "\u00a7"
    root = copy_tree(tmp)
    line = append_line(root / "src/core/text.hpp", f"// The rules ({old_name} {section}5).")
    expect_failure(root, f"src/core/text.hpp:{line}: cites {old_name}")
    edit(root / "src/core/text.hpp", f"({old_name} {section}5)", f"(docs/design.md {section}9)")
    expect_failure(root, f"src/core/text.hpp:{line}: cites docs/design.md {section}9, which "
                         "docs/design.md does not have")


@case
def a_call_into_a_module_not_used_fails_on_the_built_libraries(tmp):
    # The symbols of the libraries this test's build made: doctor calls scan's functions, so a
    # graph without that use fails on them too (and names the function), not only on includes.
    build = Path(os.environ["CUDAENV_BIN"]).resolve().parent.parent
    root = copy_tree(tmp)
    graph = root / "src/module-graph.toml"
    doctor = re.search(r'target = "cudaenv_doctor"\nuses = \[[^\]]*\]', graph.read_text())
    check(doctor and '"scan",' in doctor.group(0), f"doctor's uses in {graph} (the anchor moved?)")
    edit(graph, doctor.group(0), doctor.group(0).replace('"scan",', ""))
    proc = run_checker(root, "--build-dir", str(build))
    check(proc.returncode == 1, f"exit {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    check(re.search(r"libcudaenv_doctor\.a: module doctor calls cudaenv::scan::\S.*, defined in "
                    r"module scan", proc.stdout), f"the symbol crossing named:\n{proc.stdout}")
    # The tree as it is passes the same check.
    proc = run_checker(copy_tree(tmp / "again"), "--build-dir", str(build))
    check(proc.returncode == 0, f"the tree as it is: exit {proc.returncode}:\n{proc.stdout}")


finish()
