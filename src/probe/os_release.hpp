#pragma once
// The operating system: /etc/os-release (or /usr/lib/os-release), the kernel release and the
// processor architecture.

#include <string_view>

#include "core/sysroot.hpp"
#include "probe/facts.hpp"

namespace cudaenv::probe {

OsFacts probe_os(const Sysroot& sysroot);

// Reads os-release's KEY=value lines; values may be double- or single-quoted.
void parse_os_release(std::string_view text, OsFacts& facts);

}  // namespace cudaenv::probe
