#include "cli/progress.hpp"

#include <cstdio>
#include <numeric>

#include "cli/terminal.hpp"
#include "core/text.hpp"

namespace cudaenv::cli {

namespace {

constexpr auto redraw_interval = std::chrono::milliseconds(100);

std::string percent(std::uint64_t done, std::uint64_t total) {
  if (total == 0) return "   ";
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%3d%%", static_cast<int>(100 * done / total));
  return buffer;
}

std::string eta(double seconds) {
  if (seconds < 0 || seconds > 24 * 3600) return "--:--";
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%02d:%02d", static_cast<int>(seconds) / 60,
                static_cast<int>(seconds) % 60);
  return buffer;
}

}  // namespace

ProgressView::ProgressView(Context& context, const install::InstallPlan& plan)
    : err_(context.err),
      notes_(notes(context)),
      terminal_(progress_wanted(context)),
      done_(plan.archives.size(), 0),
      totals_(plan.archives.size(), 0),
      complete_(plan.archives.size(), false),
      start_(std::chrono::steady_clock::now()) {
  for (const auto& archive : plan.archives) {
    names_.push_back(text::printable(archive.component, 60));  // a name from the mirror
    totals_[names_.size() - 1] = archive.file.size;
  }
}

ProgressView::~ProgressView() = default;

void ProgressView::waiting_for_lock() {
  std::lock_guard lock(mutex_);
  notes_ << "waiting for another cudaenv install of the same version to finish...\n";
}

void ProgressView::lock_taken_over(const std::string& note) {
  std::lock_guard lock(mutex_);
  notes_ << "note: " << text::printable(note, text::message_limit) << '\n';
}

void ProgressView::archive_progress(size_t index, std::uint64_t done, std::uint64_t total) {
  std::lock_guard lock(mutex_);
  done_[index] = done;
  if (total > 0) totals_[index] = total;
  redraw_locked(false);
}

void ProgressView::archive_done(size_t index) {
  std::lock_guard lock(mutex_);
  complete_[index] = true;
  redraw_locked(true);
}

void ProgressView::finish() {
  std::lock_guard lock(mutex_);
  if (!terminal_ || lines_drawn_ == 0) return;
  err_ << "\033[" << lines_drawn_ << "F\033[J" << std::flush;
  lines_drawn_ = 0;
}

void ProgressView::redraw_locked(bool force) {
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < redraw_interval) return;
  last_draw_ = now;
  if (lines_drawn_ > 0) err_ << "\033[" << lines_drawn_ << "F";
  for (size_t i = 0; i < names_.size(); ++i) {
    char line[160];
    std::snprintf(line, sizeof line, "\033[2K  %-26s %s %10s / %-10s%s\n", names_[i].c_str(),
                  percent(done_[i], totals_[i]).c_str(), human_bytes(done_[i]).c_str(),
                  human_bytes(totals_[i]).c_str(), complete_[i] ? "  done" : "");
    err_ << line;
  }
  const auto done = std::accumulate(done_.begin(), done_.end(), std::uint64_t{0});
  const auto total = std::accumulate(totals_.begin(), totals_.end(), std::uint64_t{0});
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const double remaining =
      rate > 0 ? static_cast<double>(total - std::min(done, total)) / rate : -1;
  err_ << "\033[2K  total " << percent(done, total) << " " << human_bytes(done) << " / "
       << human_bytes(total) << "  " << human_bytes(static_cast<unsigned long long>(rate))
       << "/s  ETA " << eta(remaining) << "\n"
       << std::flush;
  lines_drawn_ = names_.size() + 1;
}

}  // namespace cudaenv::cli
