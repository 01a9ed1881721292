#pragma once
// What the dynamic loader (glibc's ld.so) does to find a library a binary needs, simulated over
// the files as they are: the requesting object's DT_RPATH (only when it has no DT_RUNPATH),
// LD_LIBRARY_PATH, its DT_RUNPATH, the ld.so cache, then the default directories. $ORIGIN, $LIB
// and $PLATFORM in the paths are expanded as ld.so expands them. Not simulated: libraries a
// process already loaded (a soname loaded once is reused), the executable's own DT_RPATH for a
// library's dependencies, and glibc-hwcaps subdirectories.

#include <optional>
#include <string>
#include <vector>

#include "scan/ld_cache.hpp"

namespace cudaenv::scan {

struct LoaderInput {
  std::string library;                   // a soname: libcudnn.so.9
  std::optional<std::string> requester;  // the object that needs it (--for FILE)
  std::string ld_library_path;
  std::vector<LdCacheEntry> cache;  // this machine's entries only
  std::vector<std::string> default_directories;
  std::string platform;  // $PLATFORM: x86_64, aarch64
  std::string lib;       // $LIB: lib/x86_64-linux-gnu on Debian and Ubuntu
};

struct SearchStep {
  std::string source;     // "DT_RUNPATH of libtorch_cuda.so", "LD_LIBRARY_PATH", "ld.so cache"
  std::string candidate;  // the file looked for
  bool found = false;
};

struct LoaderAnswer {
  std::vector<SearchStep> steps;  // in the loader's order, up to and including the winner
  std::optional<SearchStep> winner;
  std::vector<std::string> notes;  // e.g. an RPATH ignored because RUNPATH is present
};

// The directories and DT_* values come from `input`; the requester's dynamic section is read
// from its file (a damaged or non-ELF file is ErrorKind::failure naming it).
Result<LoaderAnswer> simulate_loader(const LoaderInput& input);

// "$ORIGIN/../lib" with origin /a/b → "/a/b/../lib"; ${ORIGIN}, $LIB and $PLATFORM likewise.
std::string expand_dynamic_tokens(std::string_view path, const std::string& origin,
                                  const std::string& lib, const std::string& platform);

// The loader's defaults for this machine: the multiarch directories, then /lib and /usr/lib
// (and lib64 where the machine uses it).
std::vector<std::string> default_library_directories();
std::string default_lib_token();
std::string default_platform_token();

}  // namespace cudaenv::scan
