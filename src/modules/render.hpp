#pragma once
// The two renderers behind modulefiles(): Lua for Lmod, Tcl for Environment Modules (which Lmod
// reads too). Values reaching them passed check_quotable.

#include <string>
#include <vector>

#include "modules/modulefile.hpp"

namespace cudaenv::modules {

std::string lua_toolkit(const ToolkitModule& toolkit, const ModuleSet& set);
std::string lua_cudnn(const CudnnModule& cudnn, const ModuleSet& set);
std::string tcl_toolkit(const ToolkitModule& toolkit, const ModuleSet& set);
std::string tcl_cudnn(const CudnnModule& cudnn, const ModuleSet& set);

// What both formats say, so the two engines print the same words.
std::string describe_floor(const ToolkitModule& toolkit);
std::vector<std::string> whatis_lines(const ToolkitModule& toolkit);
// The toolkits a node's driver could fall back on, newest first: (version, lowest driver).
std::vector<std::pair<std::string, std::string>> fallbacks(const ModuleSet& set);
// cuda/<version> modules a cuDNN build for `major` can run with.
std::vector<std::string> cuda_modules_of_major(const ModuleSet& set, int major);

}  // namespace cudaenv::modules
