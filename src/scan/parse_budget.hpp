#pragma once
// How much work parsing one image may do. A string table entry is found by its terminating NUL,
// and a crafted file can point tens of thousands of entries (section names, DT_NEEDED, symbols,
// ld.so cache entries) at one string a megabyte long: copied one by one, a 1.9 MB file asked for
// 60 GB. Names are views into the image, and every byte a parser reads as a name (or visits
// again, as the search for fatbinaries among data does) is charged to a budget that is a fixed
// multiple of the image's size, so work and anything kept stay linear in the file by
// construction.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace cudaenv::scan {

using Bytes = std::span<const unsigned char>;

class ParseBudget {
 public:
  // Real files read each name about once (linkers share a suffix now and then): eight times the
  // image, plus a floor for tiny images, is far above what any real file needs.
  static constexpr uint64_t image_multiple = 8;
  static constexpr uint64_t floor_bytes = uint64_t{1} << 20;

  explicit ParseBudget(size_t image_size)
      : left_(static_cast<uint64_t>(image_size) * image_multiple + floor_bytes) {}

  uint64_t left() const { return left_; }

  // False, and the budget spent, when `bytes` do not fit in what is left.
  bool charge(uint64_t bytes) {
    if (bytes > left_) {
      left_ = 0;
      return false;
    }
    left_ -= bytes;
    return true;
  }

 private:
  uint64_t left_;
};

// A NUL-terminated string inside a string table, as a view into it.
struct TableString {
  enum class Outcome { found, outside, over_budget };
  Outcome outcome = Outcome::outside;
  std::string_view text;
};

// The string at `index` of `table`, its bytes charged to `budget`; the search for its NUL
// never goes further than the budget left.
inline TableString string_in(Bytes table, uint64_t index, ParseBudget& budget) {
  if (index >= table.size()) return {};
  const auto* start = table.data() + index;
  const auto room = table.size() - index;
  const auto searched = room < budget.left() ? room : static_cast<size_t>(budget.left());
  const auto* end = static_cast<const unsigned char*>(std::memchr(start, 0, searched));
  if (!end) {
    if (searched < room) return {TableString::Outcome::over_budget, {}};
    return {};
  }
  const auto length = static_cast<size_t>(end - start);
  if (!budget.charge(length + 1)) return {TableString::Outcome::over_budget, {}};
  return {TableString::Outcome::found, {reinterpret_cast<const char*>(start), length}};
}

}  // namespace cudaenv::scan
