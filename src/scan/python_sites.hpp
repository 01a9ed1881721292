#pragma once
// Where a Python interpreter installs packages: asked of the interpreter itself (sysconfig's
// purelib and platlib, and the user site when it exists), with a fixed script of ours.

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/process.hpp"

namespace cudaenv::scan {

// The interpreter is run as named (a venv's python3 is a link to the base interpreter: run
// through its resolved path it would answer for the base, not the venv). ErrorKind::not_found
// when it cannot be run, ErrorKind::failure when it answers something else than a list of paths.
Result<std::vector<std::string>> python_site_packages(
    ProcessRunner& runner, const std::string& python,
    const std::map<std::string, std::string>& environment);

// The python3 found first on a PATH value; empty when none.
std::string python_on_path(const std::string& path_variable);

}  // namespace cudaenv::scan
