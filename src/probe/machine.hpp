#pragma once
// The whole probe: everything `cudaenv info` reports, read without changing anything.

#include <filesystem>
#include <vector>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/facts.hpp"
#include "probe/library_loader.hpp"

namespace cudaenv::probe {

struct ProbeContext {
  const Sysroot& sysroot;
  LibraryLoader& loader;
  ProcessRunner& runner;
  const Environment& env;
  std::filesystem::path data_root;
  std::vector<std::filesystem::path> shared_roots = {};  // read-only system stores, after data_root
};

MachineFacts probe_machine(const ProbeContext& context);

}  // namespace cudaenv::probe
