#include "core/fd.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cudaenv {

void UniqueFd::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status UniqueFd::close(const std::string& what) {
  if (fd_ < 0) return Ok{};
  // close(2) releases the descriptor even when it fails (Linux): never retry it on EINTR.
  const int result = ::close(std::exchange(fd_, -1));
  if (result != 0 && errno != EINTR)
    return make_error(ErrorKind::failure, "cannot write " + what + ": " + std::strerror(errno));
  return Ok{};
}

}  // namespace cudaenv
