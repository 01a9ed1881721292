#pragma once
// Triton compiles its kernels with a ptxas of its own (bundled in the wheel, or the one
// TRITON_PTXAS_PATH names). A ptxas older than the GPU cannot compile for it.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.hpp"
#include "manifest/database.hpp"

namespace cudaenv::scan {

// Maps a path as the machine's programs see it to where this process reads it (a sysroot).
using HostPath = std::function<std::string(const std::string&)>;

struct PtxasFile {
  std::optional<Version> release;  // the CUDA release it comes from; nullopt: unreadable
  // When the file is a wrapper script (`exec <a toolkit>/bin/ptxas "$@"`, as sites
  // and containers put on PATH), the ptxas it runs, whose banner gave the release; else empty.
  std::string runs;
};

struct TritonPtxas {
  std::string path;
  std::string chosen_by;  // "TRITON_PTXAS_PATH" or "bundled with triton"
  std::optional<Version> release;
  std::string runs;  // see PtxasFile
};

// The ptxas Triton uses for the first site-packages directory holding triton; nullopt when
// Triton is not installed there. The paths given are read as they are; the path a wrapper
// script names is the machine's, read through `host_path` (identity when empty).
std::optional<TritonPtxas> find_triton_ptxas(const std::vector<std::string>& site_packages,
                                             const std::optional<std::string>& ptxas_variable,
                                             const HostPath& host_path = {});

// The release a ptxas belongs to, read from the version banner inside the file ("Cuda
// compilation tools, release 12.8, V12.8.93"), or through one wrapper script to the ptxas it
// names: nothing is run, a script is only read.
PtxasFile read_ptxas(const std::string& path, const HostPath& host_path = {});
// The absolute path ending in /ptxas that a short script (starting with "#!") names; nullopt for
// anything else. Words holding '$' are left alone: nothing is expanded.
std::optional<std::string> wrapped_ptxas(std::string_view script);
// The release named by the first well-formed version banner in a ptxas binary's bytes.
std::optional<Version> ptxas_release_in(std::string_view bytes);

// Why a ptxas of `release` cannot compile for `arch` (major*10+minor); nullopt when it can or
// the database does not know the architecture.
std::optional<std::string> ptxas_arch_problem(const manifest::Database& db, const Version& release,
                                              int arch);

}  // namespace cudaenv::scan
