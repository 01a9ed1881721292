#pragma once
// CUDAHOSTCXX, the host compiler CMake hands nvcc, for when the default one is one the toolkit
// refuses. Cheap enough for the prompt hook's change path: a few stat calls and one small header;
// no process is started and no manifest read.

#include <optional>
#include <string>
#include <string_view>

#include "core/environment.hpp"

namespace cudaenv::activate {

// The newest GCC major the toolkit at `prefix` accepts, from the `#if __GNUC__ > N` check in its
// include/crt/host_config.h (the check nvcc itself runs); nullopt when the header is missing or
// says nothing about it.
std::optional<int> newest_supported_gcc(const std::string& prefix);

// The major version in a GCC driver's file name: "g++-13" → 13, "x86_64-linux-gnu-g++-12" → 12;
// nullopt for an unversioned name such as "g++".
std::optional<int> gcc_major_in_name(std::string_view file_name);

// The compiler to set as CUDAHOSTCXX for the toolkit at `prefix`, or nullopt when none is needed
// or none fits. Needed when `c++`, the first on env's PATH followed through its links (Debian's
// alternatives end in g++-N), is a GCC newer than the toolkit accepts; then the newest g++-M on
// PATH that it accepts. Never when env already sets CUDAHOSTCXX: the user's choice stands.
std::optional<std::string> needed_host_compiler(const Environment& env, const std::string& prefix);

}  // namespace cudaenv::activate
