"""`cudaenv resolve` on the corrected compatibility data: driver floors from a release's
components rather than its bundled driver, answers that say which facts no primary source states,
and releases with an unknown driver floor offered only when asked for."""

import json

from harness import case, check, clean_env, finish, run


def resolve(tmp, *args, expect=0):
    return run(["resolve", "--no-detect", *args], clean_env(tmp), check_exit=expect)


def resolve_json(tmp, *args, expect=0):
    return json.loads(resolve(tmp, *args, "--json", expect=expect).stdout)


@case
def a_redist_refresh_needs_the_driver_of_its_components_not_its_bundled_one(tmp):
    # 13.0.3 ships the nvcc and cudart of 13.0.2 with the newer driver 580.126.20.
    out = resolve_json(tmp, "--cuda", "13.0.3", "--driver", "580.95.05")
    check(out["cuda"]["version"] == "13.0.3", f"cuda {out['cuda']}")
    check(out["cuda"]["driver_mode"] == "full", f"580.95.05 runs 13.0.3 fully: {out['cuda']}")
    check(out["driver"]["required"] == "580.95.05", f"driver {out['driver']}")


@case
def an_answer_resting_on_an_inferred_fact_says_so(tmp):
    out = resolve_json(tmp, "--cuda", "13.0.3")
    facts = out.get("unconfirmed", [])
    check(len(facts) == 1, f"one unconfirmed fact: {facts}")
    if facts:
        check("13.0.3 driver floor 580.95.05" in facts[0]["fact"], f"fact {facts[0]}")
        check(facts[0]["confidence"] == "inferred", f"confidence {facts[0]}")
        check("13.0.2" in facts[0]["basis"], f"the basis names what it rests on: {facts[0]}")
    proc = resolve(tmp, "--cuda", "13.0.3")
    check("Unverified" in proc.stdout and "is inferred:" in proc.stdout, proc.stdout)


@case
def an_answer_from_primary_sources_has_no_unconfirmed_facts(tmp):
    out = resolve_json(tmp, "--cuda", "12.4.1", "--driver", "550.54.15")
    check(out.get("unconfirmed") == [], f"unconfirmed {out.get('unconfirmed')}")
    check(out["cuda"].get("checked") is True, f"cuda {out['cuda']}")


@case
def a_framework_build_with_an_inferred_record_is_named(tmp):
    # torch 2.15's CUDA and cuDNN are on PyPI; its architecture list is carried over from 2.14.
    out = resolve_json(tmp, "--torch", "2.15", "--arch", "8.9")
    facts = " | ".join(f["fact"] for f in out.get("unconfirmed", []))
    check("torch 2.15 cu132 build" in facts, f"the carried-over arch list is named: {facts}")


@case
def torch_2_15_resolves_to_the_build_plain_pip_install_gets(tmp):
    # torch 2.15.0 on PyPI requires cuda-toolkit 13.2.2 and nvidia-cudnn-cu13 9.26.0.51.
    out = resolve_json(tmp, "--torch", "2.15")
    check(out["cuda"]["version"] == "13.2.2", f"cuda {out['cuda']}")
    check(out["cudnn"] and out["cudnn"]["full_version"] == "9.26.0.51", f"cudnn {out['cudnn']}")
    torch = out["frameworks"][0]
    check(torch["variant"] == "cu132" and torch["install"] == 'pip install "torch==2.15.*"', f"{torch}")


@case
def torch_2_14_default_is_the_cuda_13_0_build(tmp):
    # torch 2.14.0 on PyPI requires cuda-toolkit 13.0.3: the plain install is cu130, not cu132.
    out = resolve_json(tmp, "--torch", "2.14", "--cuda", "13.0")
    torch = out["frameworks"][0]
    check(torch["variant"] == "cu130" and "--index-url" not in torch["install"], f"{torch}")
    check(not any("torch 2.14 series" in f["fact"] for f in out.get("unconfirmed", [])),
          f"the default is sourced now: {out.get('unconfirmed')}")


@case
def sm_88_is_a_known_architecture_from_cuda_13_0(tmp):
    # nvcc 13.0.48 to 13.5.37 list sm_88; ptxas 12.9.86 rejects it.
    out = resolve_json(tmp, "--arch", "8.8")
    check(out["cuda"]["version"].startswith("13."), f"cuda {out['cuda']}")
    # CUDA 12 has no sm_88 target, but its sm_87 code runs on 8.8 (binary compatibility within
    # a family): served, with the note saying what compiling for sm_88 itself needs.
    old = resolve_json(tmp, "--arch", "8.8", "--cuda", "12")
    check(old["cuda"]["version"].startswith("12."), f"cuda {old['cuda']}")
    check(any("sm_87 code runs on this GPU" in w and "sm_88 (unnamed) needs CUDA >= 13.0" in w
              for w in old["warnings"]), f"{old['warnings']}")


@case
def releases_with_an_unknown_driver_floor_are_left_out_by_default(tmp):
    out = resolve_json(tmp)
    check(not out["cuda"]["version"].startswith("13.4."), f"best {out['cuda']}")
    check(out["cuda"].get("checked") is True, f"cuda {out['cuda']}")
    for version in ("13.4.2", "13.4.3", "13.5.0"):
        check(version in out.get("unchecked_skipped", []), f"skipped {out.get('unchecked_skipped')}")
    proc = resolve(tmp)
    check("left out, driver floor unknown: CUDA" in proc.stdout and "--include-unchecked" in proc.stdout,
          proc.stdout)


@case
def include_unchecked_offers_them_marked(tmp):
    out = resolve_json(tmp, "--include-unchecked")
    check(out["cuda"]["version"] == "13.5.0", f"newest release: {out['cuda']}")
    check(out["cuda"].get("checked") is False, f"marked unchecked: {out['cuda']}")
    check(out["driver"]["required"] is None, f"no floor: {out['driver']}")
    check(any("unchecked" in w for w in out["warnings"]), f"warnings {out['warnings']}")
    check(any(f["confidence"] == "unconfirmed" and "13.5.0" in f["fact"] for f in out.get("unconfirmed", [])),
          f"unconfirmed {out['unconfirmed']}")
    proc = resolve(tmp, "--include-unchecked")
    check("(unchecked release)" in proc.stdout, proc.stdout)


@case
def asking_for_an_unchecked_release_explains_and_suggests_the_flag(tmp):
    out = resolve_json(tmp, "--cuda", "13.4", expect=4)
    check(any("driver floor is unknown" in r["reason"] for r in out["rejected"]), f"{out['rejected']}")
    check(any("--include-unchecked" in s for s in out["suggestions"]), f"{out['suggestions']}")
    with_flag = resolve_json(tmp, "--cuda", "13.4", "--include-unchecked", "--gcc", "16.1")
    check(with_flag["cuda"]["version"] == "13.4.3", f"{with_flag['cuda']}")
    check(not any("gcc" in w for w in with_flag["warnings"]), f"13.4 takes gcc 16: {with_flag['warnings']}")
    # Where the unchecked releases could not fit either (CUDA 13 dropped sm_70), the flag is not offered.
    hopeless = resolve_json(tmp, "--cuda", "13.4", "--arch", "7.0", expect=4)
    check(not any("--include-unchecked" in s for s in hopeless["suggestions"]),
          f"--include-unchecked only when it could work: {hopeless['suggestions']}")
    check(any(s.startswith("--cuda 12.9 would fit") for s in hopeless["suggestions"]),
          f"the nearest release below 13.4 is 12.9: {hopeless['suggestions']}")


@case
def cuda_13_5_is_known_but_unchecked(tmp):
    # cuda-toolkit 13.5.0 on PyPI (nvcc 13.5.37); no source read gives its driver floor.
    out = resolve_json(tmp, "--cuda", "13.5", expect=4)
    check(any("13.5.0" in r["candidate"] and "driver floor is unknown" in r["reason"] for r in out["rejected"]),
          f"{out['rejected']}")
    asked = resolve_json(tmp, "--cuda", "13.5", "--include-unchecked", "--gcc", "16.1")
    check(asked["cuda"]["version"] == "13.5.0" and asked["cuda"].get("checked") is False, f"{asked['cuda']}")
    check(not any("gcc" in w for w in asked["warnings"]), f"13.5 takes gcc 16: {asked['warnings']}")
    too_new = resolve_json(tmp, "--cuda", "13.5", "--include-unchecked", "--gcc", "17.1")
    check(any("gcc" in w for w in too_new["warnings"]), f"13.5 stops at gcc 16: {too_new['warnings']}")


@case
def new_cudnn_releases_are_known_with_their_cuda_builds(tmp):
    # 9.20.0's own manifest lists CUDA 12 and 13 builds (it was recorded as CUDA-13-only).
    out = resolve_json(tmp, "--cuda", "12.9", "--cudnn", "9.20")
    check(out["cudnn"] and out["cudnn"]["full_version"] == "9.20.0.48", f"cudnn {out['cudnn']}")
    # --cudnn 9.19 is the newest 9.19.x: 9.19.1.2 (PYPI_CUDNN, a CUDA 13 wheel only).
    for version, full in (("9.12", "9.12.0.46"), ("9.19", "9.19.1.2"), ("9.19.0", "9.19.0.56")):
        out = resolve_json(tmp, "--cudnn", version)
        check(out["cudnn"] and out["cudnn"]["full_version"] == full, f"{version}: {out['cudnn']}")


@case
def the_13_2_2_refresh_is_in_the_database(tmp):
    out = resolve_json(tmp, "--cuda", "13.2.2", "--driver", "595.71.05")
    check(out["cuda"]["version"] == "13.2.2" and out["cuda"]["driver_mode"] == "full", f"{out['cuda']}")



@case
def cudnn_releases_with_both_cuda_builds_resolve_for_either_major(tmp):
    # PYPI_CUDNN: 9.19.0.56, 9.18.1.3 and 9.15.1.9 are both nvidia-cudnn-cu12 and -cu13 wheels.
    # On CUDA 13, --cudnn 9.19 takes the newer 9.19.1.2, which has no CUDA 12 wheel.
    for cudnn, cuda, full in (("9.19", "12.8", "9.19.0.56"), ("9.18", "13.0", "9.18.1.3"),
                              ("9.15.1", "12.9", "9.15.1.9"), ("9.19", "13.0", "9.19.1.2")):
        out = resolve_json(tmp, "--cudnn", cudnn, "--cuda", cuda)
        check(out["cudnn"] and out["cudnn"]["full_version"] == full, f"{cudnn} on {cuda}: {out['cudnn']}")
        check(out["cuda"]["version"].startswith(cuda + "."), f"{cudnn} on {cuda}: {out['cuda']}")


@case
def torch_2_11_resolves_with_the_cudnn_its_pypi_wheel_pins(tmp):
    # PYPI_TORCH: torch 2.11.0 requires cuda-toolkit==13.0.2 and nvidia-cudnn-cu13==9.19.0.56.
    out = resolve_json(tmp, "--torch", "2.11")
    check(out["cudnn"] and out["cudnn"]["full_version"] == "9.19.0.56", f"cudnn {out['cudnn']}")
    check(out["cuda"]["version"].startswith("13.0."), f"cuda {out['cuda']}")
    proc = resolve(tmp, "--torch", "2.11")
    check("cuDNN      9.19.0 (9.19.0.56)" in proc.stdout, proc.stdout)


@case
def cudnn_9_28_and_the_point_releases_pypi_lists_are_known(tmp):
    # PYPI_CUDNN: 9.28.1.4 is a cu13 wheel only; 9.28.0.42 and 9.21.1.3 are cu12 and cu13.
    out = resolve_json(tmp, "--cudnn", "9.28.1")
    check(out["cudnn"] and out["cudnn"]["full_version"] == "9.28.1.4", f"cudnn {out['cudnn']}")
    check(out["cuda"]["version"].startswith("13."), f"cuda {out['cuda']}")
    resolve_json(tmp, "--cudnn", "9.28.1", "--cuda", "12", expect=4)
    for cudnn, full in (("9.28.0", "9.28.0.42"), ("9.21.1", "9.21.1.3"), ("9.25.1", "9.25.1.1")):
        out = resolve_json(tmp, "--cudnn", cudnn, "--cuda", "12.9")
        check(out["cudnn"] and out["cudnn"]["full_version"] == full, f"{cudnn}: {out['cudnn']}")


@case
def driver_floors_from_nvidias_table_print_no_unverified_line(tmp):
    # RN133 Table 3: 13.1 Update 1 >= 590.48.01, 13.2 Update 2 >= 595.71.05, 13.3 Update 1 >= 610.43.02.
    for driver, cuda in (("590.48.01", "13.1.1"), ("590.66.01", "13.1.1"), ("595.71.05", "13.2.2"),
                         ("610.43.02", "13.3.1")):
        proc = resolve(tmp, "--driver", driver, "--cuda", cuda)
        check(f"CUDA       {cuda}" in proc.stdout, proc.stdout)
        check("Unverified" not in proc.stdout, f"{driver}: {proc.stdout}")
    for driver in ("595.71.05", "610.43.02"):
        proc = resolve(tmp, "--driver", driver)
        check("Unverified" not in proc.stdout, f"{driver}: {proc.stdout}")
    # The plain answer on 590 is the 13.1.2 refresh, which has no row of its own: one line, and it
    # rests on the table's 13.1 Update 1 row, not on a driver table left unread.
    proc = resolve(tmp, "--driver", "590.48.01")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("Unverified")]
    check(len(lines) == 1 and "CUDA 13.1.2 driver floor" in lines[0], proc.stdout)
    check("not read" not in proc.stdout and "upper bound" not in proc.stdout, proc.stdout)

finish()
