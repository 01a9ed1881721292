#pragma once
// libarchive's disk writer sets the process umask to 0 and back around every entry it writes.
// Two writers interleaving there can leave the whole process at umask 0, and a file another
// thread creates inside that window gets mode 0666 or 0777. So each entry is written holding
// this lock, and threads that may run beside an extraction hold it while they create a file or
// directory.

#include <mutex>

namespace cudaenv {

inline std::mutex& umask_lock() {
  static std::mutex lock;
  return lock;
}

}  // namespace cudaenv
