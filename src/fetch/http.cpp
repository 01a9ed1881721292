#include "fetch/http.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <sys/file.h>

namespace cudaenv::fetch {

namespace fs = std::filesystem;

namespace {

constexpr size_t replay_chunk = 1 << 20;
constexpr long stall_speed_bytes = 1024;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Failures worth another attempt: the network or the server hiccupped.
bool is_transient(CURLcode code, long http_status) {
  if (code == CURLE_HTTP_RETURNED_ERROR) {
    return http_status >= 500 || http_status == 408 || http_status == 429;
  }
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

Error transfer_error(CURLcode code, long http_status, const std::string& url, const char* detail) {
  if (code == CURLE_HTTP_RETURNED_ERROR) {
    const auto what = http_status == 404 ? std::string("not found on the mirror (HTTP 404)")
                                         : "HTTP " + std::to_string(http_status);
    return make_error(ErrorKind::network, url + ": " + what,
                      "check the version and the mirror (--mirror, CUDAENV_MIRROR)");
  }
  std::string message = url + ": " + curl_easy_strerror(code);
  if (detail != nullptr && detail[0] != '\0') message += " (" + std::string(detail) + ")";
  std::string hint = "check the network and the mirror URL";
  if (code == CURLE_COULDNT_RESOLVE_HOST)
    hint = "the host name does not resolve: check DNS or the mirror URL";
  if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE) {
    hint = "the server's certificate is not trusted: pass --ca-bundle FILE for a corporate CA";
  }
  if (code == CURLE_FILE_COULDNT_READ_FILE || code == CURLE_REMOTE_FILE_NOT_FOUND) {
    hint = "the file is not on the mirror: check the version and --mirror";
  }
  return make_error(ErrorKind::network, message, hint);
}

void apply_common_options(CURL* easy, const std::string& url, const FetchOptions& options,
                          char* error_buffer) {
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "cudaenv");
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT,
                   static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, stall_speed_bytes);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.stall_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options.ca_bundle.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, options.ca_bundle.c_str());
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
  error_buffer[0] = '\0';
}

size_t append_to_string(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

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

Result<std::string> fetch_text(const std::string& url, const FetchOptions& options,
                               long* http_status) {
  global_init();
  auto backoff = options.first_backoff;
  for (int attempt = 1;; ++attempt) {
    CURL* easy = curl_easy_init();
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    std::string body;
    apply_common_options(easy, url, options, error_buffer.data());
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_to_string);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    const CURLcode code = curl_easy_perform(easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(easy);
    if (http_status != nullptr) *http_status = status;
    if (code == CURLE_OK) return body;
    if (!is_transient(code, status) || attempt >= options.max_attempts) {
      return transfer_error(code, status, url, error_buffer.data());
    }
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

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
  int lock_fd = -1;
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
  // The transfer failed for good; reported once `pending` is delivered.
  std::optional<Error> failed;
  std::array<char, CURL_ERROR_SIZE> error_buffer{};

  ~State() {
    stop_transfer();
    if (multi != nullptr) curl_multi_cleanup(multi);
    if (out != nullptr) std::fclose(out);
    if (lock_fd >= 0) ::close(lock_fd);  // releases the lock
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
      if (cancelled) return make_error(ErrorKind::failure, url + ": cancelled");
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
    return retry_or_fail(code, status, detail);
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
    std::this_thread::sleep_for(backoff);
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
    fs::create_directories(cache_path.parent_path(), ec);
    // Installs of different versions can share an archive: one process at a time appends to a
    // cache file; the next one then replays it whole.
    if (options.lock_cache_file) {
      const auto lock_path = cache_path.string() + ".lock";
      lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (lock_fd >= 0) ::flock(lock_fd, LOCK_EX);
    }
    const auto existing = fs::exists(cache_path, ec) ? fs::file_size(cache_path, ec) : 0;
    if (expected > 0 && existing > expected) fs::remove(cache_path, ec);  // not a prefix of it
    if (fs::exists(cache_path, ec)) {
      replay.open(cache_path, std::ios::binary);
      replaying = replay.is_open();
    }
    out = std::fopen(cache_path.c_str(), "ab");
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
    if (auto opened = s.open_cache(); !opened) return opened.error();
  }
  if (s.replaying) {
    auto chunk = s.replay_chunk_from_cache();
    if (!chunk || !chunk->empty()) return chunk;
  }
  // Everything is already in the cache: no request at all.
  if (s.expected > 0 && s.offset >= s.expected) s.finished = true;
  if (auto pumped = s.pump(); !pumped) return pumped.error();
  if (!s.pending.empty()) return s.deliver_pending();
  std::fflush(s.out);
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
