#include "fetch/http.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <openssl/evp.h>
#include <sys/file.h>

#include "core/fd.hpp"
#include "core/safe_write.hpp"
#include "core/umask_lock.hpp"
#include "fetch/curl_common.hpp"

namespace cudaenv::fetch {

namespace fs = std::filesystem;

using detail::apply_common_options;
using detail::global_init;
using detail::is_transient;
using detail::transfer_error;
using detail::wait_unless_stopped;

namespace {

constexpr size_t replay_chunk = 1 << 20;

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes) { EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()); }
  std::string hex() const {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned length = 0;
    EVP_MD_CTX* copy = EVP_MD_CTX_new();
    EVP_MD_CTX_copy_ex(copy, ctx_);
    EVP_DigestFinal_ex(copy, digest.data(), &length);
    EVP_MD_CTX_free(copy);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < length; ++i) {
      out += digits[digest[i] >> 4];
      out += digits[digest[i] & 0xf];
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

}  // namespace

struct ResumableStream::State {
  std::string url;
  fs::path cache_path;
  std::uint64_t expected = 0;
  FetchOptions options;
  ProgressFn progress;
  Sha256 hash;
  std::ifstream replay;
  bool replaying = false;
  std::FILE* out = nullptr;
  UniqueFd lock_fd;          // held while appending to the cache file; closing releases the lock
  std::uint64_t offset = 0;  // bytes handed to the reader, all of them in the cache file
  std::uint64_t skip = 0;    // bytes to drop: a server that ignored the Range header resends them
  std::uint64_t transfer_start = 0;                 // offset the current transfer asked for
  std::chrono::steady_clock::time_point last_data;  // when the current transfer last sent bytes
  std::string pending;
  std::string delivered;
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
  bool finished = false;
  int attempts = 0;
  std::chrono::milliseconds backoff{0};
  std::atomic<bool> cancelled{false};
  bool oversize = false;  // the server sent more than `expected`
  // The transfer failed for good; reported once `pending` is delivered.
  std::optional<Error> failed;
  std::array<char, CURL_ERROR_SIZE> error_buffer{};

  // The most bytes this download may have: the announced size, else the ceiling.
  std::uint64_t limit() const { return expected > 0 ? expected : options.max_download_bytes; }

  ~State() {
    stop_transfer();
    if (multi != nullptr) curl_multi_cleanup(multi);
    if (out != nullptr) std::fclose(out);
  }

  void stop_transfer() {
    if (easy == nullptr) return;
    curl_multi_remove_handle(multi, easy);
    curl_easy_cleanup(easy);
    easy = nullptr;
  }

  static size_t on_data(char* data, size_t size, size_t count, void* user) {
    auto* self = static_cast<State*>(user);
    std::string_view bytes(data, size * count);
    if (!bytes.empty()) self->last_data = std::chrono::steady_clock::now();
    if (self->skip > 0) {
      const auto dropped = std::min<std::uint64_t>(self->skip, bytes.size());
      bytes.remove_prefix(dropped);
      self->skip -= dropped;
    }
    if (self->offset + self->pending.size() + bytes.size() > self->limit()) {
      self->oversize = true;
      return 0;  // libcurl ends the transfer with CURLE_WRITE_ERROR
    }
    self->pending.append(bytes);
    return size * count;
  }

  // After the status line: a 200 where we asked for a range means the whole body comes again.
  static size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* self = static_cast<State*>(user);
    std::string_view line(data, size * count);
    if (line.starts_with("HTTP/")) {
      self->skip = 0;
      if (self->offset > 0 && line.find(" 200") != std::string_view::npos)
        self->skip = self->offset;
    }
    return size * count;
  }

  void start_transfer() {
    easy = curl_easy_init();
    apply_common_options(easy, url, options, error_buffer.data());
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &State::on_data);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &State::on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
    // A Range header, not CURLOPT_RESUME_FROM: with that, libcurl fails a 200 answer ("cannot
    // resume") and a partial download behind a server that ignores ranges could never finish;
    // on_header copes with a 200 by dropping the bytes already held.
    const auto range = std::to_string(offset) + "-";
    curl_easy_setopt(easy, CURLOPT_RANGE, offset > 0 ? range.c_str() : nullptr);
    // A length announced over the whole archive's fails at once (a 206 is shorter, a 200 to a
    // Range request exactly that long); one not announced is checked in on_data.
    curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limit()));
    skip = 0;
    transfer_start = offset;
    last_data = std::chrono::steady_clock::now();
    curl_multi_add_handle(multi, easy);
  }

  // Runs the transfer until bytes are pending, it ends, or it fails for good. Bytes that came
  // with the failure are delivered (and cached) first, so the next run resumes after them.
  Status pump() {
    while (pending.empty() && !finished) {
      if (failed) return *failed;
      if (cancelled || (options.should_stop && options.should_stop()))
        return make_error(ErrorKind::failure, url + ": cancelled");
      if (easy == nullptr) start_transfer();
      int running = 0;
      curl_multi_perform(multi, &running);
      if (auto done = finished_transfer(); done) {
        if (!*done) failed = done->error();
        continue;
      }
      // libcurl's low-speed check averages over several seconds; a connection that went silent
      // is caught here, after the stall timeout without a single byte.
      if (pending.empty() && std::chrono::steady_clock::now() - last_data > options.stall_timeout) {
        const auto silent = "no data for " + std::to_string(options.stall_timeout.count()) + " s";
        stop_transfer();
        if (expected > 0 && offset == expected) {
          finished = true;  // every promised byte arrived; the server only failed to hang up
          continue;
        }
        if (auto retried = retry_or_fail(CURLE_OPERATION_TIMEDOUT, 0, silent); !retried) {
          failed = retried.error();
        }
        continue;
      }
      if (pending.empty()) curl_multi_poll(multi, nullptr, 0, 200, nullptr);
    }
    return Ok{};
  }

  // nullopt while the transfer runs; Ok when it ended (finished or retrying); an error when
  // it failed for good.
  std::optional<Status> finished_transfer() {
    int queued = 0;
    CURLMsg* message = curl_multi_info_read(multi, &queued);
    if (message == nullptr || message->msg != CURLMSG_DONE) return std::nullopt;
    const CURLcode code = message->data.result;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    const std::string detail = error_buffer.data();
    stop_transfer();
    // Bytes that arrived before a failure still count; the retry asks for the rest.
    if (code == CURLE_OK) {
      finished = true;
      return Status(Ok{});
    }
    // A connection dropped after the last promised byte: the download is complete.
    if (expected > 0 && offset + pending.size() == expected && is_transient(code, status)) {
      finished = true;
      return Status(Ok{});
    }
    if (oversize || code == CURLE_FILESIZE_EXCEEDED) return oversize_error();
    return retry_or_fail(code, status, detail);
  }

  Error oversize_error() const {
    if (expected == 0) {
      return make_error(ErrorKind::integrity,
                        url + ": larger than " + std::to_string(limit()) +
                            " bytes, the most a download of unknown size may be "
                            "(CUDAENV_MAX_DOWNLOAD_BYTES)",
                        "the server is corrupt or hostile: use another mirror or index");
    }
    return make_error(ErrorKind::integrity,
                      url + ": the mirror sends more than the " + std::to_string(expected) +
                          " bytes its manifest lists",
                      "the mirror is corrupt or hostile: use another mirror (--mirror)");
  }

  Status check_announced_size() const {
    if (expected <= options.max_download_bytes) return Ok{};
    return make_error(ErrorKind::integrity,
                      url + ": announced as " + std::to_string(expected) +
                          " bytes, more than the " + std::to_string(options.max_download_bytes) +
                          " a download may be (CUDAENV_MAX_DOWNLOAD_BYTES)",
                      "the manifest or index is corrupt or hostile: use another mirror or index");
  }

  // After a failed transfer: wait and let the next pump() ask for the rest, or give up.
  Status retry_or_fail(CURLcode code, long status, const std::string& detail) {
    // Progress was made (bytes delivered since the transfer started, or still pending): this
    // is a new failure, not one more of the same, so a long download survives many drops.
    if (offset + pending.size() > transfer_start) {
      attempts = 0;
      backoff = std::chrono::milliseconds(0);
    }
    if (!is_transient(code, status) || ++attempts >= options.max_attempts) {
      return transfer_error(code, status, url, detail.c_str());
    }
    backoff = backoff.count() == 0 ? options.first_backoff : backoff * 2;
    wait_unless_stopped(backoff, options.should_stop);
    return Ok{};
  }

  Result<std::string_view> deliver_pending() {
    delivered.swap(pending);
    pending.clear();
    if (std::fwrite(delivered.data(), 1, delivered.size(), out) != delivered.size()) {
      return make_error(ErrorKind::failure, "cannot write " + cache_path.string() + " (disk full?)",
                        "free space in the cudaenv data root, then run the command again");
    }
    hash.update(delivered);
    offset += delivered.size();
    if (progress) progress(offset, expected);
    return std::string_view(delivered);
  }

  Result<std::string_view> replay_chunk_from_cache() {
    delivered.resize(replay_chunk);
    replay.read(delivered.data(), static_cast<std::streamsize>(delivered.size()));
    delivered.resize(static_cast<size_t>(replay.gcount()));
    if (delivered.empty()) {
      replaying = false;
      replay.close();
      return std::string_view{};
    }
    hash.update(delivered);
    offset += delivered.size();
    if (progress) progress(offset, expected);
    return std::string_view(delivered);
  }

  Status open_cache() {
    std::error_code ec;
    {
      // Archives download beside extractions on other threads (core/umask_lock.hpp).
      const std::lock_guard creating(umask_lock());
      fs::create_directories(cache_path.parent_path(), ec);
      // Installs of different versions can share an archive: one process at a time appends to
      // a cache file; the next one then replays it whole.
      if (options.lock_cache_file) {
        const auto lock_path = cache_path.string() + ".lock";
        lock_fd =
            UniqueFd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
      }
    }
    if (lock_fd) ::flock(lock_fd.get(), LOCK_EX);
    const auto existing = fs::exists(cache_path, ec) ? fs::file_size(cache_path, ec) : 0;
    if (existing > limit()) fs::remove(cache_path, ec);  // not a prefix of it
    if (fs::exists(cache_path, ec)) {
      replay.open(cache_path, std::ios::binary);
      replaying = replay.is_open();
    }
    // Never through a link planted at the cache file's name (open_for_append: O_NOFOLLOW).
    if (auto appending = open_for_append(cache_path); appending)
      out = ::fdopen(appending->release(), "ab");
    if (out == nullptr) {
      return make_error(ErrorKind::failure, "cannot write " + cache_path.string(),
                        "check the permissions of the cudaenv data root");
    }
    return Ok{};
  }
};

ResumableStream::ResumableStream(std::string url, fs::path cache_file, std::uint64_t expected_size,
                                 FetchOptions options, ProgressFn progress)
    : state_(std::make_unique<State>()) {
  global_init();
  state_->url = std::move(url);
  state_->cache_path = std::move(cache_file);
  state_->expected = expected_size;
  state_->options = std::move(options);
  state_->progress = std::move(progress);
  state_->multi = curl_multi_init();
}

ResumableStream::~ResumableStream() = default;

Result<std::string_view> ResumableStream::next() {
  auto& s = *state_;
  if (s.out == nullptr) {
    if (auto announced = s.check_announced_size(); !announced) return announced.error();
    if (auto opened = s.open_cache(); !opened) return opened.error();
  }
  if (s.replaying) {
    auto chunk = s.replay_chunk_from_cache();
    if (!chunk || !chunk->empty()) return chunk;
  }
  if (s.failed && s.pending.empty()) return *s.failed;  // a failure is final, also at the end
  // Everything is already in the cache: no request at all. (A transfer under way runs to its
  // end instead, so that a byte past the promised size is seen, and refused.)
  if (s.expected > 0 && s.offset >= s.expected && s.easy == nullptr) s.finished = true;
  if (auto pumped = s.pump(); !pumped) return pumped.error();
  if (!s.pending.empty()) return s.deliver_pending();
  // The last bytes written may still be buffered: on a full disk only this flush fails.
  if (std::fflush(s.out) != 0) {
    return make_error(ErrorKind::failure,
                      "cannot write " + s.cache_path.string() + ": " + std::strerror(errno),
                      "free space in the cudaenv data root, then run the command again");
  }
  return std::string_view{};
}

Status ResumableStream::drain() {
  while (true) {
    auto chunk = next();
    if (!chunk) return chunk.error();
    if (chunk->empty()) return Ok{};
  }
}

std::string ResumableStream::sha256_hex() const { return state_->hash.hex(); }
std::uint64_t ResumableStream::bytes() const { return state_->offset; }
void ResumableStream::cancel() { state_->cancelled = true; }

Result<std::string> sha256_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::failure, "cannot read " + path.string());
  Sha256 hash;
  std::string buffer(replay_chunk, '\0');
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    hash.update(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  return hash.hex();
}

}  // namespace cudaenv::fetch
