#pragma once
// Python frameworks that bring their own CUDA: which CUDA the installed PyTorch was built for and
// which GPU architectures it carries, asked of the python3 on PATH with an embedded script
// (src/probe/scripts/framework_probe.py).

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

PythonFrameworkFacts probe_python_frameworks(const Sysroot& sysroot, ProcessRunner& runner,
                                             const Environment& env);

// Reads the script's JSON line into facts; false when the output holds no such line.
bool parse_framework_report(std::string_view output, PythonFrameworkFacts& facts);

}  // namespace cudaenv::probe
