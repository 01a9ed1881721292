"""Every doctest case runs under CTest as itself.

doctest_discover_tests registers one CTest test per case and runs it with --test-case=NAME.
CMake splits a name at ';' (its list separator) into two tests whose filters match no case, and
such a "test" passes without running anything. This check lists the cases the unit test program
holds and the unit tests CTest knows, and fails naming every case that would not run.

Usage: check_case_names.py UNIT_TESTS CTEST BUILD_DIR"""

import re
import subprocess
import sys

SELF = "unit.every_case_runs_under_ctest"


def doctest_cases(program):
    listing = subprocess.run([program, "--list-test-cases"], capture_output=True, text=True, check=True,
                             timeout=120).stdout
    return {line for line in listing.splitlines()
            if line and not line.startswith("[doctest]") and not line.startswith("====")}


def ctest_tests(ctest, build_dir):
    listing = subprocess.run([ctest, "-N", "-L", "unit"], cwd=build_dir, capture_output=True, text=True,
                             check=True, timeout=120).stdout
    return {m.group(1) for m in re.finditer(r"^\s*Test\s+#\d+: (.*)$", listing, re.M)} - {SELF}


def main():
    program, ctest, build_dir = sys.argv[1:4]
    cases, tests = doctest_cases(program), ctest_tests(ctest, build_dir)
    problems = [f"case {name!r} has a ';', which CMake splits: write ',' instead" for name in sorted(cases)
                if ";" in name]
    problems += [f"case {name!r} is not a CTest test of its own, so it never runs"
                 for name in sorted(cases - tests) if ";" not in name]
    problems += [f"CTest test {name!r} matches no case: it passes without running anything"
                 for name in sorted(tests - cases)]
    for problem in problems:
        print(problem)
    print(f"{len(cases)} cases, {len(tests)} CTest unit tests, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
