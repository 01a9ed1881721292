#include "scan/mapped_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <utility>

#include <sys/mman.h>
#include <sys/stat.h>

#include "core/fd.hpp"

namespace cudaenv::scan {

namespace {

Error open_error(const std::filesystem::path& path, const std::string& why) {
  return make_error(ErrorKind::failure, path.string() + ": " + why);
}

// The SIGBUS guard: a fixed table of the live mappings, read by the signal handler without locks.
// A slot is claimed by a compare-and-swap of its start from 0, after its size is stored.
struct GuardSlot {
  std::atomic<uintptr_t> start{0};
  std::atomic<size_t> size{0};
  std::atomic<bool> faulted{false};
};
constexpr int guard_slots = 256;  // far more than the scan's worker threads map at once
GuardSlot guard_table[guard_slots];
uintptr_t page_size = 4096;

// A read past the end of a file truncated under its mapping: the rest of that mapping becomes
// anonymous zero pages (mmap is a plain system call, safe here), and the read is retried. A
// SIGBUS at any other address is not ours: the default action, as without the handler.
void on_sigbus(int signal, siginfo_t* info, void*) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (auto& slot : guard_table) {
    const auto start = slot.start.load(std::memory_order_acquire);
    const auto size = slot.size.load(std::memory_order_acquire);
    if (start == 0 || address < start || address >= start + size) continue;
    const auto page = address & ~(page_size - 1);
    // The page's start as a pointer derived from the faulting one, not cast from an integer.
    void* page_start = static_cast<char*>(info->si_addr) - (address - page);
    void* zeros = ::mmap(page_start, start + size - page, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros != MAP_FAILED) {
      slot.faulted.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void install_guard() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (const long size = ::sysconf(_SC_PAGESIZE); size > 0)
      page_size = static_cast<uintptr_t>(size);
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, nullptr);
  });
}

int claim_slot(const void* data, size_t size) {
  for (int i = 0; i < guard_slots; ++i) {
    auto& slot = guard_table[i];
    if (slot.start.load(std::memory_order_relaxed) != 0) continue;
    slot.size.store(size, std::memory_order_release);
    slot.faulted.store(false, std::memory_order_release);
    uintptr_t expected = 0;
    if (slot.start.compare_exchange_strong(expected, reinterpret_cast<uintptr_t>(data),
                                           std::memory_order_acq_rel))
      return i;
  }
  return -1;
}

}  // namespace

Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return open_error(path, std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return open_error(path, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return open_error(path, "not a regular file");
  if (static_cast<uint64_t>(info.st_size) > max_size)
    return open_error(path, "larger than " + std::to_string(max_size >> 30) +
                                " GiB (the size limit of a file read)");
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return MappedFile(nullptr, 0, -1);
  install_guard();
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data == MAP_FAILED) return open_error(path, std::strerror(errno));
  return MappedFile(static_cast<const unsigned char*>(data), size, claim_slot(data, size));
}

bool MappedFile::changed() const {
  return slot_ >= 0 && guard_table[slot_].faulted.load(std::memory_order_acquire);
}

void MappedFile::release() {
  if (!data_) return;
  // Out of the guard's table before the pages go: a later mapping may reuse the addresses.
  if (slot_ >= 0) guard_table[slot_].start.store(0, std::memory_order_release);
  ::munmap(const_cast<unsigned char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  slot_ = -1;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      slot_(std::exchange(other.slot_, -1)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

}  // namespace cudaenv::scan
