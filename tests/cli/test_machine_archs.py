"""A machine whose GPUs share an architecture has each architecture listed once, in the order of
its GPUs: resolve's target, scan's GPUs and verdicts, verify's build and the note about declared
targets. The machine is the DGX fixture (two H100s) with an A100 put between them; `info` still
lists all three GPUs."""

import json
import sys

from harness import DEBIAN_PATH, FAKE_DRIVER, SKIP, case, check, clean_env, finish, fixture_machine, run_in

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"


def three_gpu_machine(tmp):
    """dgx-h100-580 whose driver reports H100, A100, H100 (sm_90, sm_80, sm_90)."""
    machine = fixture_machine("dgx-h100-580", tmp / "machines")
    descriptions = list(machine.rglob("fake-driver.ini"))
    check(descriptions, "the fixture machine describes its fake driver")
    for ini in descriptions:
        kept = [line for line in ini.read_text().splitlines() if not line.startswith("gpu=")]
        gpus = [f"gpu={H100}|9.0|85520809984", f"gpu={A100}|8.0|85899345920", f"gpu={H100}|9.0|85520809984"]
        ini.write_text("\n".join(kept + gpus) + "\n")
    home = tmp / "home"
    home.mkdir()
    return clean_env(home, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=tmp / "root", PATH=DEBIAN_PATH)


@case
def resolve_lists_each_architecture_once(tmp):
    env = three_gpu_machine(tmp)
    shown = run_in(["resolve"], env, tmp, expect=0).stdout
    target = next((line for line in shown.splitlines() if line.startswith("Target")), "")
    check("sm_90 sm_80 (detected)" in target, f"each architecture once, in GPU order: {target!r}")
    check(target.count("sm_90") == 1, f"sm_90 once: {target!r}")
    report = json.loads(run_in(["resolve", "--json"], env, tmp, expect=0).stdout)
    check(report["target"]["gpus"] == ["9.0", "8.0"], f"--json: {report['target']}")
    # --arch given twice (in two spellings) is one architecture too.
    flags = run_in(["resolve", "--no-detect", "--arch", "8.9", "--arch", "sm_89", "--arch", "9.0"], env, tmp,
                   expect=0).stdout
    check("Target     any driver, sm_89 sm_90 (--arch)\n" in flags, f"--arch repeated: {flags!r}")
    # info describes the GPUs themselves: all three stay.
    info = json.loads(run_in(["info", "--json"], env, tmp, expect=0).stdout)
    check([gpu["name"] for gpu in info["gpus"]] == [H100, A100, H100], f"info lists every GPU: {info['gpus']}")


@case
def scan_judges_each_architecture_once(tmp):
    env = three_gpu_machine(tmp)
    (tmp / "empty").mkdir()
    shown = run_in(["scan", str(tmp / "empty")], env, tmp, expect=0).stdout
    gpus = next((line for line in shown.splitlines() if line.startswith("GPUs")), "")
    check(gpus.startswith(f"GPUs       sm_90 ({H100}), sm_80 ({A100});"), f"scan's GPUs: {gpus!r}")
    report = json.loads(run_in(["scan", str(tmp / "empty"), "--json"], env, tmp, expect=0).stdout)
    check(report["gpus"] == [{"arch": "sm_90", "name": H100}, {"arch": "sm_80", "name": A100}],
          f"scan --json: {report['gpus']}")
    described = json.loads(run_in(["scan", str(tmp / "empty"), "--arch", "8.9", "--arch", "89", "--json"], env,
                                  tmp, expect=0).stdout)
    check([gpu["arch"] for gpu in described["gpus"]] == ["sm_89"], f"--arch twice: {described['gpus']}")


@case
def verify_and_its_target_note_name_each_architecture_once(tmp):
    env = three_gpu_machine(tmp)
    project = tmp / "project"
    project.mkdir()
    (project / ".cudaenv").write_text('cuda = "13.0"\n\n[targets.a10]\ndriver = "535.104.05"\narch = ["8.6"]\n')
    # The fixture's nvcc compiles nothing (exit 7); the build plan and the note come first.
    proc = run_in(["verify", "13.0"], env, project, expect=7)
    build = next((line for line in proc.stdout.splitlines() if line.startswith("Build")), "")
    check(build.startswith("Build      sm_80 sm_90 + PTX compute_90 "), f"verify builds for each architecture once: {build!r}")
    notes = [line for line in proc.stderr.splitlines() if "matches none of the targets" in line]
    check(len(notes) == 1, f"one note about the declared targets: {proc.stderr!r}")
    note = notes[0] if notes else ""
    check(note.count("its arch list has no 9.0") == 1 and note.count("its arch list has no 8.0") == 1,
          f"the note names each missing architecture once: {note!r}")


finish()
