#pragma once
// The solver: the best (toolkit, cuDNN, framework builds) set for a target machine, with the
// reason every other candidate fell and, when nothing fits, the smallest change that would.

#include <optional>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "manifest/database.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::resolve {

// The machine to resolve for: this one (from probe) or a described one (--driver, --arch).
struct Target {
  std::optional<Version> driver;  // nullopt: no driver known, no driver constraint
  std::vector<Version> gpus;      // compute capabilities; empty: no GPU constraint
  std::optional<Version> gcc;     // host gcc; only ever a warning
  bool tegra_machine = false;     // a Jetson board (/etc/nv_tegra_release): out of scope
  bool windows_driver = false;    // WSL2: the driver is Windows', upgraded there
  // The GPUs' names where the machine (or --gpu) gives them, "NVIDIA H100 80GB HBM3": whether
  // they are data-center GPUs decides forward compatibility.
  std::vector<std::string> gpu_names = {};
};

struct Request {
  std::optional<VersionSpec> cuda;
  std::optional<VersionSpec> cudnn;
  std::optional<VersionSpec> torch;
  std::optional<VersionSpec> tensorflow;
  std::optional<VersionSpec> jax;  // over the JAX CUDA plugin's major: "12", "13" or "latest"
  // Also consider releases whose driver floor the database does not know (--include-unchecked).
  bool include_unchecked = false;
};

struct FrameworkChoice {
  std::string name;                   // "torch", "tensorflow", "jax"
  std::string version;                // "2.5" (a series) or the exact version asked for
  std::string variant;                // "cu124", "cuda12"; empty for TensorFlow
  std::string install;                // the pip command line
  std::vector<std::string> pip_args;  // what follows `pip install` in it (resolve/pip_lines.hpp)
  Version rank;                       // what preference compares: the framework's version
  bool stable = true;                 // not a build its maintainers call experimental
  bool pypi_default = false;          // the build `pip install torch==X` gets from PyPI
};

// A fact the answer rests on that no primary source states (confidence "inferred" or
// "unconfirmed" in the database).
struct UnconfirmedFact {
  std::string fact;        // "CUDA 13.0.3 driver floor 580.95.05"
  std::string confidence;  // "inferred" or "unconfirmed"
  std::string basis;       // what the value rests on
};

struct Solution {
  const manifest::CudaRelease* cuda = nullptr;
  DriverCheck driver;
  const manifest::CudnnRelease* cudnn = nullptr;  // nullptr: no cuDNN asked for or needed
  std::vector<FrameworkChoice> frameworks;
  std::vector<std::string> warnings;
  std::vector<UnconfirmedFact> unconfirmed;
  bool unchecked = false;  // the toolkit's driver floor is unknown (only with include_unchecked)
};

struct Rejection {
  std::string candidate;  // "CUDA 12.4.1", "CUDA 12.4.1 + torch 2.8 cu128"
  std::string reason;
};

struct Resolution {
  std::vector<Solution> solutions;  // best first; empty when nothing fits
  std::vector<Rejection> rejected;
  std::vector<std::string> suggestions;        // only when nothing fits
  std::vector<std::string> unchecked_skipped;  // releases left out: driver floor unknown
  bool ok() const { return !solutions.empty(); }
  const Solution& best() const { return solutions.front(); }
};

Resolution resolve(const manifest::Database& db, const Target& target, const Request& request);
// The same without the suggestion pass (which itself resolves relaxed requests).
Resolution resolve_without_suggestions(const manifest::Database& db, const Target& target,
                                       const Request& request);

// Which requested framework versions the database does not know at all (exit code 3).
std::vector<std::string> unknown_versions(const manifest::Database& db, const Request& request);

}  // namespace cudaenv::resolve
