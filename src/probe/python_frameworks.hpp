#pragma once
// Python frameworks that bring their own CUDA: which CUDA the installed PyTorch was built for and
// which GPU architectures it carries, asked of the python3 on PATH with an embedded script
// (src/probe/scripts/framework_probe.py).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/host_facts.hpp"

namespace cudaenv::probe {

struct EmbeddedScript {
  std::string name;  // "framework_probe.py"
  std::string text;
};

// The scripts in src/probe/scripts/, compiled into the binary by cmake/EmbedFiles.cmake.
const std::vector<EmbeddedScript>& embedded_scripts();

// How long the interpreter may take to answer; a hung import is reported, not waited on.
inline constexpr std::chrono::milliseconds python_probe_timeout{10000};

// One run of the python3 on PATH for everything doctor asks it: its version, its site-packages,
// torch's version and CUDA (read from torch/version.py, imported only when that file does not
// say). `error` says why it could not answer, a timeout included.
PythonFrameworkFacts probe_python_frameworks(const Sysroot& sysroot, ProcessRunner& runner,
                                             const Environment& env);

// Reads the script's JSON line into facts; false when the output holds no such line.
bool parse_framework_report(std::string_view output, PythonFrameworkFacts& facts);

}  // namespace cudaenv::probe
