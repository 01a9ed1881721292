#pragma once
// The dynamic loader's cache, /etc/ld.so.cache as ldconfig writes it: the "glibc-ld.so.cache1.1"
// format (a header, then fixed-size entries naming a soname and a path by offsets into a string
// area), optionally after the old "ld.so-1.7.0" table that older ldconfig versions wrote first.

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "scan/elf.hpp"

namespace cudaenv::scan {

struct LdCacheEntry {
  std::string soname;  // libcudnn.so.9
  std::string path;    // /usr/lib/x86_64-linux-gnu/libcudnn.so.9
  uint32_t flags = 0;  // ELF class and architecture bits, as ldconfig sets them
};

// An entry as it lies in the image: views into it, valid while the image stays mapped.
struct LdCacheView {
  std::string_view soname;
  std::string_view path;
  uint32_t flags = 0;
};

// Every entry of a cache image, in the cache's order (ld.so takes the first match). A cache in
// another format, one whose tables run past the file, a soname longer than a file name
// (NAME_MAX) or a path longer than PATH_MAX, and names read past the image's ParseBudget are
// ErrorKind::failure.
Result<std::vector<LdCacheView>> parse_ld_cache(Bytes image);

// The entries of a cache file for this machine's libraries, copied out of the mapping; empty,
// with `problem` set, when the file is missing or damaged (ld.so then searches without it).
std::vector<LdCacheEntry> read_ld_cache_file(const std::string& host_path, std::string& problem);

// Whether an entry is for libraries this machine's programs load (x86-64 or aarch64 libc6),
// not a 32-bit or foreign one the cache also lists.
bool entry_for_this_machine(uint32_t flags);

}  // namespace cudaenv::scan
