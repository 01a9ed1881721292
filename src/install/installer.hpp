#pragma once
// Installing a set of archives into one prefix, atomically: every archive streams
// (download -> sha256 -> decompress -> staging directory) in parallel; only when all of them
// arrived intact is the staging directory renamed into place, with its receipt. A killed run
// leaves no visible install; the next run clears its staging and resumes its downloads.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fetch/http.hpp"
#include "install/components.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

struct InstallPlan {
  std::string product;  // "cuda" or "cudnn"
  std::string version;  // "12.4.1"
  std::string platform;
  std::string variant;  // cuDNN's "cuda12"; empty for toolkits
  std::string mirror;   // base URL
  fs::path target;      // final prefix
  std::vector<SelectedArchive> archives;
  // "redist" (NVIDIA's archives from a mirror) or "pypi" (wheels from a package index, whose
  // URL `mirror` then holds); named in the receipt.
  std::string source = "redist";
};

// Called from worker threads; implementations synchronise themselves.
struct InstallObserver {
  virtual ~InstallObserver() = default;
  virtual void waiting_for_lock() {}
  // A stale lock (its holder died, here or on another host) was taken over: says whose.
  virtual void lock_taken_over(const std::string& note) { (void)note; }
  virtual void archive_progress(size_t index, std::uint64_t done, std::uint64_t total) {
    (void)index, (void)done, (void)total;
  }
  virtual void archive_done(size_t index) { (void)index; }
};

struct InstallSettings {
  int jobs = 4;
  bool force = false;
  // The bytes each archive may unpack to; 0: default_unpacked_cap() of its size.
  std::uint64_t max_unpacked_bytes = 0;
  fetch::FetchOptions fetch;
};

enum class InstallOutcome { installed, already_installed };

// Creates the store's directories an install of `product` ("cuda", "cudnn") writes to, or says
// why they cannot be written (whose they are, and what to do); before anything is downloaded.
Status prepare_store(const Store& store, const std::string& product);

Result<InstallOutcome> run_install(const InstallPlan& plan, const Store& store,
                                   const InstallSettings& settings, InstallObserver& observer);

// Lays the prefix out like a toolkit: NVIDIA's archives ship lib/ while nvcc's profile links
// against lib64/, so whichever is missing becomes a link to the other.
void link_lib64(const fs::path& prefix);

}  // namespace cudaenv::install
