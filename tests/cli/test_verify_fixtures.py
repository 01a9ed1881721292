"""`cudaenv verify` with stand-in toolkits (tests/fixtures/toolkits) installed in cudaenv's store on
a fixture machine: how a compiler refusal and a build without the GPU's architecture are named."""

import json
import shutil
import sys

from harness import DEBIAN_PATH, FAKE_DRIVER, FIXTURES, SKIP, case, check, clean_env, finish, fixture_machine, run

if not FAKE_DRIVER:
    print("skip: CUDAENV_FAKE_DRIVER is not set, fixture machines need the fake driver library")
    sys.exit(SKIP)


def verify_json(args, env, expect_exit):
    proc = run(["verify", *args, "--json"], env, check_exit=expect_exit)
    return json.loads(proc.stdout)


def fake_toolkit_machine(tmp, toolkit, version):
    """The DGX fixture machine (2x H100, driver 580, gcc 13) with a stand-in toolkit installed in
    cudaenv's store."""
    machine = fixture_machine("dgx-h100-580", tmp / "machines")
    root = tmp / "cudaenv"
    shutil.copytree(FIXTURES / "toolkits" / toolkit, root / "toolkits" / version, symlinks=True)
    home = tmp / "home"
    home.mkdir()
    return clean_env(home, CUDAENV_SYSROOT=machine, CUDAENV_ROOT=root, PATH=DEBIAN_PATH)


@case
def nvcc_refusing_the_host_gcc_is_host_compiler_unsupported(tmp):
    env = fake_toolkit_machine(tmp, "nvcc-rejects-gcc", "12.2.2")
    report = verify_json(["12.2"], env, 7)
    check(report["toolkit"]["version"] == "12.2.2", f"{report['toolkit']}")
    check(report["toolkit"]["selected_by"] == "spec", f"{report['toolkit']}")
    check(report["build"]["ok"] is False and report["run"] is None, "nothing to run")
    check(report["cause"] == "host_compiler_unsupported", f"{report['cause']}: {report['message']}")
    check("gcc 13" in report["message"] and "gcc <= 12" in report["message"], report["message"])
    check("sudo apt install g++-12" in report["fix"], report["fix"])
    check("hands it to nvcc and CMake" in report["fix"], report["fix"])
    check("-allow-unsupported-compiler" in report["fix"], report["fix"])


@case
def a_build_without_the_gpus_architecture_is_no_kernel_image(tmp):
    env = fake_toolkit_machine(tmp, "no-kernel-image", "13.0.2")
    report = verify_json(["13.0", "--only-arch", "8.0", "--no-ptx"], env, 7)
    command = " ".join(report["build"]["command"])
    check("-gencode arch=compute_80,code=sm_80" in command, command)
    check("code=compute_" not in command, f"no PTX: {command}")
    check(report["build"]["arch_source"] == "only-arch", f"{report['build']}")
    check(report["cause"] == "no_kernel_image", f"{report['cause']}: {report['message']}")
    check("sm_90" in report["message"], report["message"])
    check("-gencode arch=compute_90,code=sm_90" in report["fix"], report["fix"])
    check(report["run"]["errors"][0]["name"] == "cudaErrorNoKernelImageForDevice",
          f"{report['run']['errors']}")

    # Without the diagnostic flags the build targets the machine's GPUs (probe: 2x H100), + PTX.
    plain = verify_json(["13.0"], env, 7)
    command = " ".join(plain["build"]["command"])
    check("arch=compute_90,code=sm_90" in command and "arch=compute_90,code=compute_90" in command,
          command)
    check(plain["build"]["archs"] == ["sm_90"], f"{plain['build']['archs']}")


finish()
