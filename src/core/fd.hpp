#pragma once
// An owned file descriptor. Descriptors closed by hand leak on every early return and lose the
// error close(2) reports (NFS reports a failed write-back only there); this type closes on every
// path and makes the checked close the easy one.

#include <string>
#include <utility>

#include "core/error.hpp"

namespace cudaenv {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      discard();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  // Closes without looking at the result: for paths that already failed.
  ~UniqueFd() { discard(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  // Hands the descriptor over; this object then owns nothing.
  int release() { return std::exchange(fd_, -1); }

  // Closes and reports close(2)'s error as "cannot write <what>: <reason>" — the last chance to
  // learn that buffered data did not reach the disk. Closing an empty UniqueFd is Ok.
  Status close(const std::string& what);

 private:
  void discard();
  int fd_ = -1;
};

}  // namespace cudaenv
