#pragma once
// Triton compiles its kernels with a ptxas of its own (bundled in the wheel, or the one
// TRITON_PTXAS_PATH names). A ptxas older than the GPU cannot compile for it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.hpp"
#include "manifest/database.hpp"

namespace cudaenv::scan {

struct TritonPtxas {
  std::string path;
  std::string chosen_by;           // "TRITON_PTXAS_PATH" or "bundled with triton"
  std::optional<Version> release;  // the CUDA release it comes from; nullopt: unreadable
};

// The ptxas Triton uses for the first site-packages directory holding triton; nullopt when
// Triton is not installed there.
std::optional<TritonPtxas> find_triton_ptxas(const std::vector<std::string>& site_packages,
                                             const std::optional<std::string>& ptxas_variable);

// The release a ptxas belongs to, read from the version banner inside the file ("Cuda
// compilation tools, release 12.8, V12.8.93"): nothing found in a Python tree is run.
std::optional<Version> ptxas_release(const std::string& path);
// The release named by the first well-formed version banner in a ptxas binary's bytes.
std::optional<Version> ptxas_release_in(std::string_view bytes);

// Why a ptxas of `release` cannot compile for `arch` (major*10+minor); nullopt when it can or
// the database does not know the architecture.
std::optional<std::string> ptxas_arch_problem(const manifest::Database& db, const Version& release,
                                              int arch);

}  // namespace cudaenv::scan
