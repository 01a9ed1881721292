#pragma once
// What every command receives: the environment read once, the seams (sysroot, process runner,
// library loader) and the output streams. Tests build one with their own seams.

#include <iostream>

#include "core/environment.hpp"
#include "core/process.hpp"
#include "core/sysroot.hpp"
#include "probe/library_loader.hpp"

namespace cudaenv::cli {

struct Context {
  Environment env;
  Sysroot sysroot;
  ProcessRunner& runner;
  probe::LibraryLoader& loader;
  std::ostream& out;
  std::ostream& err;
  bool colour = false;           // stdout is a terminal and NO_COLOR is unset
  std::istream* in = &std::cin;  // answers to questions (bootstrap's confirmations)
  bool quiet = false;            // --quiet: no progress and no notes, only results and problems
};

}  // namespace cudaenv::cli
