#pragma once
// Which file of an installed Python package loads a library: what `cudaenv why LIB --for torch`
// asks the loader about, since a framework's own RUNPATH (torch's libtorch_cuda.so names its
// wheels' nvidia/*/lib) decides its copy, not the plain process's search order.

#include <optional>
#include <string>
#include <vector>

namespace cudaenv::scan {

// The package's ELF files below site-packages/<package> (the name as pip normalises it to a
// directory: "jax-cuda12-plugin" -> jax_cuda12_plugin) that list `library` in DT_NEEDED, the
// one with the shortest path first; nullopt when none does. Bounded: 8 levels, 20 000 entries.
std::optional<std::string> package_library_needing(const std::vector<std::string>& site_packages,
                                                   const std::string& package,
                                                   const std::string& library);

}  // namespace cudaenv::scan
