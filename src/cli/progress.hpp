#pragma once
// Install progress on a terminal: one line per archive and a total with bytes, rate and ETA,
// redrawn in place at most ten times a second. Off a terminal, or under --quiet, it prints
// nothing; the note that another install holds the lock is left out under --quiet.

#include <chrono>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "install/installer.hpp"

namespace cudaenv::cli {

class ProgressView final : public install::InstallObserver {
 public:
  ProgressView(Context& context, const install::InstallPlan& plan);
  ~ProgressView() override;

  void waiting_for_lock() override;
  void lock_taken_over(const std::string& note) override;
  void archive_progress(size_t index, std::uint64_t done, std::uint64_t total) override;
  void archive_done(size_t index) override;
  // Erases the live lines (before the summary is printed).
  void finish();

 private:
  void redraw_locked(bool force);

  std::ostream& err_;
  std::ostream& notes_;
  bool terminal_;
  std::vector<std::string> names_;
  std::vector<std::uint64_t> done_;
  std::vector<std::uint64_t> totals_;
  std::vector<bool> complete_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  size_t lines_drawn_ = 0;
  std::mutex mutex_;
};

}  // namespace cudaenv::cli
