#pragma once
// Where the dynamic linker looks for CUDA's runtime: LD_LIBRARY_PATH, the directories named in
// /etc/ld.so.conf.d/*.conf, and the system's default directories; and every libcudart it can reach
// there, since the first one found wins whatever toolkit a program was built with.

#include <string_view>

#include "core/environment.hpp"
#include "core/sysroot.hpp"
#include "probe/host_facts.hpp"

namespace cudaenv::probe {

LinkerFacts probe_linker(const Sysroot& sysroot, const Environment& env);

// The directories an ld.so.conf file lists ("include" lines and comments skipped).
std::vector<std::string> parse_ld_so_conf(std::string_view conf);

}  // namespace cudaenv::probe
