#pragma once
// `cudaenv sync`'s frameworks: the wheels .cudaenv.lock pins, installed into the project's Python
// environment by uv (when on PATH) or the environment's pip, each the exact file the lock names,
// checked against its sha256 by the installer (--require-hashes); then proved: the framework
// imports there and reports the CUDA and cuDNN of the locked build. docs/lockfile.md, "sync".

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "cli/cmd_lock.hpp"
#include "cli/context.hpp"
#include "cli/download_setup.hpp"
#include "lock/framework_index.hpp"
#include "lock/lock_file.hpp"
#include "verify/frameworks.hpp"

namespace cudaenv::cli {

// The project's Python environment: the one .cudaenv names (`venv = ".venv"`), else the active
// virtualenv ($VIRTUAL_ENV).
struct PythonEnvironment {
  std::filesystem::path root;    // /repo/.venv
  std::filesystem::path python;  // /repo/.venv/bin/python
  std::string origin;            // "venv in /repo/.cudaenv", "VIRTUAL_ENV"
};

// The environment .cudaenv names (it must exist, and its interpreter must lie outside the project:
// exit 3, exit 2), else $VIRTUAL_ENV's (exit 3 without a bin/python), else nullopt. Also what
// `jupyter install` writes its kernelspec for.
Result<std::optional<PythonEnvironment>> python_environment(const LockProject& project,
                                                            Context& context);

// What sync found in the environment before installing anything.
struct FrameworkSync {
  std::optional<PythonEnvironment> environment;          // nullopt: none, the pip lines are printed
  std::map<std::string, verify::FrameworkReport> found;  // by framework, as it is there now
};

// Finds the environment and asks it what it has of each locked framework. With --frozen, an
// installed version other than the lock's is exit 1, before anything is installed. An
// environment .cudaenv names that is missing is exit 3; one whose interpreter lies inside the
// project (it could come with the repository) is refused, exit 2.
Result<FrameworkSync> survey_frameworks(const LockProject& project, const lock::LockFile& lock,
                                        bool frozen, Context& context);

// Installs each locked framework the environment lacks or has in another version (a matching one
// is left alone, no installer started), then proves each: exit 7 when one does not import or
// reports another version, CUDA or cuDNN than the locked build; exit 6 when the installer
// refuses a wheel whose sha256 is not the lock's.
Status sync_frameworks(const FrameworkSync& survey, const lock::LockFile& lock,
                       const lock::FrameworkIndexes& indexes, const DownloadSetup& setup,
                       Context& context);

}  // namespace cudaenv::cli
