#pragma once
// CUDAHOSTCXX, the host compiler CMake hands nvcc, for when the default one is one the toolkit
// refuses. Cheap enough for the prompt hook's change path: a few stat calls and one small header;
// no process is started and no manifest read.

#include <map>
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

// Whether the nvcc of CUDA `release` ("11.8.0") reads NVCC_CCBIN: from 12.5 on (nvcc 12.5.40 is
// the first whose program holds the name; 11.8.89 and 12.4.131 do not: docs/host-compiler.md).
// A release that does not parse counts as reading it: the user's variable is then left to stand.
bool honours_nvcc_ccbin(std::string_view release);

// Which host compiler nvcc and CMake get for the toolkit at `prefix`, and why.
struct HostCompilerChoice {
  std::optional<std::string> compiler;  // the program set for them; nullopt: nvcc's default stands
  std::string reason;                   // one line, for `cudaenv which --host-compiler`
  std::string missing_package;          // "g++-11": needed, none installed; empty otherwise
  bool user_choice = false;             // the user's own CUDAHOSTCXX/NVCC_CCBIN/-ccbin decides
};

// The rules, in order: the user's own CUDAHOSTCXX, NVCC_CCBIN (only where the toolkit's nvcc
// reads it: honours_nvcc_ccbin(release)) or -ccbin in NVCC_PREPEND_FLAGS stands; a `pinned`
// compiler (the project's host_compiler key) is looked up on PATH; else, when `c++` is a GCC
// newer than the toolkit accepts, the newest accepted g++-N on PATH; none there:
// `missing_package` names the one to install. An NVCC_CCBIN the toolkit ignores is named in
// `reason`.
HostCompilerChoice choose_host_compiler(const Environment& env, const std::string& prefix,
                                        const std::string& pinned = {},
                                        std::string_view release = {});

// The warning for a project's `pinned` host_compiler that is not on PATH, naming `file` and the
// fix; empty when the pin is found, none is set, or the user's own choice stands anyway.
std::string absent_pin_warning(const HostCompilerChoice& choice, const std::string& pinned,
                               const std::string& file);

// The variables that make nvcc and CMake use `choice.compiler`: CUDAHOSTCXX for CMake, and
// NVCC_PREPEND_FLAGS with `-ccbin` for nvcc (nvcc 11.8 ignores NVCC_CCBIN; the prepended flag
// works on every release, and a later -ccbin on the command line still wins). A user's own
// NVCC_PREPEND_FLAGS is kept in front. Empty when nothing is to be set.
std::map<std::string, std::string> host_compiler_variables(const Environment& env,
                                                           const HostCompilerChoice& choice);

// What NVCC_PREPEND_FLAGS becomes when cudaenv adds `-ccbin compiler` to `before`.
std::string prepend_flags_with(const std::optional<std::string>& before,
                               const std::string& compiler);

// Whether `set_to` is what prepend_flags_with makes of `before` for some compiler: the only
// NVCC_PREPEND_FLAGS change a recorded activation may undo (a forged record cannot use it to put
// flags of its choosing back).
bool is_prepended_ccbin(const std::optional<std::string>& before, std::string_view set_to);

}  // namespace cudaenv::activate
