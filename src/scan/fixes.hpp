#pragma once
// What to do about a binary that has no code a GPU here can run.

#include <optional>
#include <string>

#include "core/version.hpp"
#include "manifest/database.hpp"
#include "scan/verdict.hpp"

namespace cudaenv::scan {

// The Python distribution a file belongs to: the first path component below site-packages
// ("torch" for …/site-packages/torch/lib/libtorch_cuda.so); empty outside site-packages.
std::string package_of(const std::string& path);

// The driver a wheel has to run on; both unknown for a described machine without a driver.
struct DriverLimit {
  std::optional<Version> version;  // 580.65.06
  std::optional<Version> cuda;     // the newest CUDA it supports: 13.0
};

struct TorchWheel {
  std::string release;    // "2.14"
  std::string tag;        // "cu126"
  std::string index_url;  // "https://download.pytorch.org/whl/cu126"
};

// The newest PyTorch wheel variant the database knows that carries SASS `arch` runs natively,
// built with a CUDA that still compiles for it (the architecture's first and last CUDA), and
// that the driver runs (its CUDA, or the family's minor-version compatibility floor). nullopt
// when none does.
std::optional<TorchWheel> torch_wheel_for(const manifest::Database& db, int arch,
                                          const DriverLimit& driver);

struct FixFacts {
  const manifest::Database* db = nullptr;  // nullptr: no wheel advice beyond the generic
  DriverLimit driver;
};

// One line for a `none` verdict: for PTX newer than the driver, the driver to update to; for
// PyTorch, the wheel index that carries the architecture and TORCH_CUDA_ARCH_LIST for a source
// build; for any other file, a rebuild, naming the pip distribution that installed it.
std::string fix_for(const std::string& path, int arch, const Verdict& verdict,
                    const FixFacts& facts = {});

// The oldest CUDA release whose driver compiles this PTX ISA ("13.0" for 9.0); empty if unknown.
std::string cuda_for_ptx_isa(int major, int minor);

}  // namespace cudaenv::scan
