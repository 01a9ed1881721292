#pragma once
// Modulefiles for Lmod (Lua) and Environment Modules (Tcl) from what the store holds and what the
// database knows: one `cuda/<release>` per toolkit and one `cudnn/<version>-cuda<major>` per cuDNN
// build, in the shape EasyBuild and Spack write them. Pure functions: facts in, text out.

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::modules {

enum class Format { lua, tcl };

struct ToolkitModule {
  std::string version;                     // the release: "13.0.2"
  std::string prefix;                      // the toolkit's directory
  std::optional<std::string> full_floor;   // driver for full support; nullopt: unknown
  std::optional<std::string> minor_floor;  // minor-version compatibility floor of its major
  std::string archs;                       // "sm_75 sm_80 …"; empty: unknown
  std::optional<int> gcc_max;              // newest host GCC major it accepts
  bool has_stubs = false;                  // lib64/stubs exists (linking on GPU-less nodes)
  bool has_include = false;
  bool has_man = false;
  // bin/nvcc exists; false for a runtime-only prefix from a package index (NVIDIA's cu11/cu12
  // wheels carry no nvcc): its modulefile then names no compiler (no CUDACXX).
  bool has_nvcc = true;
  std::string store = {};  // which store it comes from, for the help text
  // The host compiler activation hands nvcc (-ccbin in NVCC_PREPEND_FLAGS) and CMake
  // (CUDAHOSTCXX) for this toolkit on the machine writing the files; nullopt: none needed.
  std::optional<std::string> host_compiler = {};

  // The lowest driver the toolkit runs on at all: the minor-compat floor, else the full one.
  std::optional<std::string> lowest_driver() const {
    return minor_floor ? minor_floor : full_floor;
  }
};

struct CudnnModule {
  std::string version;  // "9.1.0"
  int cuda_major = 0;
  std::string prefix;
};

struct ModuleSet {
  std::vector<ToolkitModule> toolkits;  // newest first
  std::vector<CudnnModule> cudnn;
};

// A modulefile to write: its path below the modules directory and its text.
struct ModuleFile {
  std::string relative;  // "cuda/13.0.2.lua" or "cuda/13.0.2"
  std::string text;
};

// Every modulefile of `set`. A path holding a character that cannot be written safely into a
// modulefile of either format is ErrorKind::usage naming it; a version, driver floor or GPU
// architecture that is not one (core/untrusted.hpp) is ErrorKind::integrity: such values come
// from the database, and nothing that fails its grammar is spliced into Tcl or Lua.
Result<std::vector<ModuleFile>> modulefiles(const ModuleSet& set, Format format);

// The first line of every file written: how `modules write` knows which files are its own.
constexpr const char* generated_marker = "written by cudaenv modules write";

// Ok when `path` holds only letters, digits, spaces and / . _ - + @ , = ~ %.
Status check_quotable(const std::string& path);
// `value` as a Lua string literal, and as a Tcl word that substitutes back to exactly `value`
// (braces when nothing in it can end them, else every special character escaped): safe for any
// value, though only checked values reach them.
std::string lua_string(const std::string& value);
std::string tcl_word(const std::string& value);

}  // namespace cudaenv::modules
