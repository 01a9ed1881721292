"""`cudaenv resolve` as a user runs it: answers, JSON shape, exit codes and error lines."""

import json

from harness import case, check, clean_env, finish, run


def resolve(tmp, *args, expect=0):
    proc = run(["resolve", "--no-detect", *args], clean_env(tmp), check_exit=expect)
    return proc


def resolve_json(tmp, *args, expect=0):
    return json.loads(resolve(tmp, *args, "--json", expect=expect).stdout)


@case
def a_target_machine_gets_its_set_with_the_documented_shape(tmp):
    out = resolve_json(tmp, "--driver", "535.104.05", "--arch", "8.6", "--torch", "2.4")
    for key in ("ok", "cuda", "cudnn", "driver", "frameworks", "warnings", "rejected", "suggestions"):
        check(key in out, f"key {key} in resolve --json")
    check(out["ok"] is True, "a set fits")
    check(out["cuda"] == {"version": "12.1.1", "driver_mode": "full", "checked": True}, f"cuda {out['cuda']}")
    check(out["cudnn"]["full_version"] == "9.1.0.70", f"cudnn {out['cudnn']}")
    check(out["driver"]["detected"] == "535.104.05" and out["driver"]["required"] == "530.30.02",
          f"driver {out['driver']}")
    torch = out["frameworks"][0]
    check(torch["name"] == "torch" and torch["variant"] == "cu121", f"framework {torch}")
    check("--index-url https://download.pytorch.org/whl/cu121" not in torch["install"],
          "cu121 is PyPI's default wheel for torch 2.4: no index URL needed")
    check(any("needs driver >=" in r["reason"] for r in out["rejected"]), "rejections carry reasons")


@case
def nothing_fits_exits_4_with_suggestions(tmp):
    out = resolve_json(tmp, "--driver", "470.82.01", "--cuda", "12", expect=4)
    check(out["ok"] is False and out["cuda"] is None, "no set")
    check(any("525.60.13" in s for s in out["suggestions"]), f"suggests the 12.x floor: {out['suggestions']}")
    proc = resolve(tmp, "--driver", "470.82.01", "--cuda", "12", expect=4)
    check("no compatible set" in proc.stdout and "Suggest" in proc.stdout, proc.stdout)


@case
def old_gpu_gets_the_last_toolkit_that_supports_it(tmp):
    proc = resolve(tmp, "--arch", "sm_35")
    check("11.8.0" in proc.stdout, f"sm_35 -> CUDA 11.8:\n{proc.stdout}")


@case
def unknown_version_exits_3(tmp):
    proc = resolve(tmp, "--torch", "9.9", expect=3)
    check(proc.stderr.startswith("cudaenv: error: unknown version: torch 9.9"), proc.stderr)


@case
def a_framework_without_code_for_the_gpu_is_named_first_with_its_nearest_fix(tmp):
    # torch 2.6's builds stop at cu126, none with sm_120 code: that is the blocker on any driver.
    for driver in ([], ["--driver", "575.51.03"]):
        out = resolve_json(tmp, "--arch", "12.0", "--torch", "2.6", *driver, expect=4)
        first = out["rejected"][0]
        check(first["candidate"] == "torch 2.6" and "no build carries sm_120 code" in first["reason"]
              and "cu126" in first["reason"], f"the blocker first ({driver}): {first}")
        check(out["suggestions"][0].startswith("--torch 2.7 would fit"),
              f"the nearest torch that carries sm_120, first ({driver}): {out['suggestions']}")
    proc = resolve(tmp, "--arch", "12.0", "--torch", "2.6", expect=4)
    rejected = [line for line in proc.stdout.splitlines() if line.startswith("Rejected")]
    check(rejected and "torch 2.6: no build carries sm_120" in rejected[0], f"text output: {proc.stdout}")
    # A version that carries the GPU is no blocker: the rejections stay the toolkits' own.
    out = resolve_json(tmp, "--arch", "12.0", "--torch", "2.7", "--driver", "535.104.05", expect=4)
    check(all(r["candidate"] != "torch 2.7" for r in out["rejected"]), f"no framework blocker: {out['rejected'][:2]}")


@case
def a_jetson_is_out_of_scope_and_gets_no_desktop_driver_advice(tmp):
    from harness import fixture_machine
    for arch, product in (("5.3", "Jetson Nano"), ("8.7", "Jetson Orin"), ("11.0", "Jetson Thor")):
        out = resolve_json(tmp, "--arch", arch, "--driver", "450.51.06", expect=4)
        check(len(out["rejected"]) == 1 and product in out["rejected"][0]["candidate"]
              and "JetPack" in out["rejected"][0]["reason"], f"sm {arch}: one blocker naming JetPack: {out['rejected']}")
        check(not any("nvidia-driver" in s and "never" not in s for s in out["suggestions"])
              and not any("upgrade the NVIDIA driver" in s for s in out["suggestions"]),
              f"sm {arch}: no desktop driver package suggested: {out['suggestions']}")
    # A board recognised by its L4T release file, whatever GPU was asked about.
    machine = fixture_machine("ci-no-driver", tmp / "machines")
    (machine / "etc").mkdir(exist_ok=True)
    (machine / "etc" / "nv_tegra_release").write_text("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic\n")
    proc = run(["resolve", "--json"], clean_env(tmp, CUDAENV_SYSROOT=machine), check_exit=4)
    out = json.loads(proc.stdout)
    check(out["rejected"][0]["candidate"] == "this machine" and "nv_tegra_release" in out["rejected"][0]["reason"],
          f"a Jetson board is named as such: {out['rejected']}")
    # A datacenter GPU is not caught by it.
    check(resolve_json(tmp, "--arch", "9.0", "--driver", "580.65.06")["ok"], "an H100 still resolves")


@case
def malformed_flags_exit_2_naming_the_flag(tmp):
    for args, flag in ((["--cuda", "twelve"], "--cuda"), (["--arch", "banana"], "--arch"),
                       (["--driver", "new"], "--driver")):
        proc = resolve(tmp, *args, expect=2)
        check(proc.stderr.startswith(f"cudaenv: error: {flag}"), f"{args}: {proc.stderr!r}")
        check("hint:" in proc.stderr, f"{args}: a hint follows")


@case
def verbose_lists_every_rejection(tmp):
    quiet = resolve(tmp, "--arch", "6.1", "--cuda", "13", expect=4).stdout
    loud = resolve(tmp, "--arch", "6.1", "--cuda", "13", "--verbose", expect=4).stdout
    check("more (--verbose lists them)" in quiet, "the short form says more exist")
    check(loud.count("needs CUDA <= 12.9") > quiet.count("needs CUDA <= 12.9"), "verbose lists more")


@case
def a_newer_database_in_the_data_root_wins(tmp):
    root = tmp / "root"
    (root / "manifests").mkdir(parents=True)
    (root / "manifests" / "drivers.toml").write_text(
        '[meta]\nrevision = "2999-01-01"\n[[branch]]\nbranch = 999\npackage = "x"\nmax_cuda = "thirteen"\n')
    proc = run(["resolve", "--no-detect"], clean_env(tmp, CUDAENV_ROOT=root))
    check(proc.returncode == 2, f"a broken newer database is a usage error (exit 2), got {proc.returncode}")
    check("drivers.toml:6" in proc.stderr and "max_cuda" in proc.stderr, proc.stderr)


finish()
