#pragma once
// Installing the framework wheels a lock pins into a project's Python environment, through the
// installers people already use (uv when it is on PATH, else the environment's own pip), never a
// wheel installer of our own: which locked wheel the environment's Python takes, where the index
// serves it, the requirements file naming it by URL with the lock's sha256, the installers'
// command lines, and what the installed build must report (the CUDA it was built with, its cuDNN).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "lock/framework_index.hpp"
#include "lock/lock_file.hpp"
#include "manifest/database.hpp"

namespace cudaenv::lock {

// "3.12" as the environment's Python reports it; nullopt for anything else.
struct PythonVersion {
  int major = 0;
  int minor = 0;
};
std::optional<PythonVersion> parse_python_version(std::string_view text);

// The locked wheel this Python installs on Linux x86-64: CPython's own build (cp312-cp312) first,
// then one for the stable ABI (cp39-abi3), then pure Python (py3-none); nullopt when none fits.
std::optional<LockedWheel> wheel_for_python(const LockedFramework& framework,
                                            const PythonVersion& python);

// The requirement the lock's pip line holds ("jax[cuda12]==0.5.0") and its distribution ("jax").
std::string locked_requirement(const LockedFramework& framework);
std::string locked_project(const LockedFramework& framework);

// The index `framework` is installed from, mirrors applied as for `lock` (framework_index.hpp).
std::string install_index_url(const std::string& name, const LockedFramework& framework,
                              const FrameworkIndexes& indexes);

// Where the index serves `filename`, read from the project's page; not_found when the page no
// longer lists it, network when the page cannot be read, integrity when the link is no plain URL.
Result<std::string> wheel_url(const std::string& name, const LockedFramework& framework,
                              const std::string& filename, const FrameworkIndexes& indexes);

// "<project> @ <url> --hash=sha256:<digest>": the one line of the requirements file the
// installer is given with --require-hashes. `url` passed untrusted::Field::url, `sha256` the
// lock's grammar: neither can start another option or line.
std::string hashed_requirement(const std::string& project, const std::string& url,
                               const std::string& sha256);

enum class Installer { uv, pip };
const char* to_string(Installer installer);

// The exact wheel, checked against the lock's digest, without its dependencies:
// `uv pip install --python PY --require-hashes --no-deps -r FILE`, or
// `PY -m pip install --require-hashes --no-deps -r FILE`.
std::vector<std::string> hashed_install_argv(Installer installer, const std::string& uv,
                                             const std::string& python,
                                             const std::string& requirements);
// Then its dependencies from the framework's index; the framework itself is already there.
std::vector<std::string> dependencies_argv(Installer installer, const std::string& uv,
                                           const std::string& python,
                                           const std::string& requirement,
                                           const std::string& index_url);

// What the locked build reports once installed, as the database knows the build: the CUDA it was
// built with and the cuDNN it bundles or was tested with (nullopt: nothing known to compare).
struct BuildExpectation {
  std::optional<Version> cuda;
  std::optional<Version> cudnn;
};
BuildExpectation expected_build(const manifest::Database& db, const std::string& name,
                                const LockedFramework& framework);

// The module a companion wheel is imported as: its distribution name in PEP 503's form with "_"
// for "-" (flash-attn -> flash_attn), as the wheels name their packages.
std::string companion_module(const std::string& name);

// A Python program, run as `python -c PROGRAM DISTRIBUTION MODULE`, that answers in
// verify/frameworks.py's form: the Python it runs in, then the distribution's installed version
// and whether MODULE imports ("framework status=imported version=2.7.4"; status=missing when
// the distribution is not installed, status=error with the exception when the import fails).
const char* companion_check_program();

// Whether `reported` ("12.4"; TensorFlow's cuDNN "9") agrees with `expected` (12.4; 9.1.0.70) in
// every part both give.
bool agrees(std::string_view reported, const Version& expected);

}  // namespace cudaenv::lock
