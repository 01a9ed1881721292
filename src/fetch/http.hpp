#pragma once
// HTTP(S) and file:// transfers with libcurl: small documents into memory, and archives as a
// resumable byte stream that is hashed (sha256, OpenSSL EVP) and mirrored into a cache file as
// it arrives, so the bytes flow download -> hash -> consumer once.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/untrusted.hpp"

namespace cudaenv::fetch {

struct FetchOptions {
  std::chrono::seconds connect_timeout{20};
  // A transfer slower than 1 KiB/s for this long counts as stalled and is retried.
  std::chrono::seconds stall_timeout{30};
  int max_attempts = 5;                          // per transfer, counting the first
  std::chrono::milliseconds first_backoff{500};  // doubled after each failed attempt
  // PEM file of extra trust roots (corporate mirrors); TLS is always verified.
  std::string ca_bundle;
  // Take turns with other processes on the cache file (through "<file>.lock" beside it): for
  // download caches that installs of different versions share.
  bool lock_cache_file = false;
  // A document (manifest, index) must arrive whole within this time, all attempts together,
  // and be no larger than this: a mirror that trickles or never ends cannot hang or fill memory.
  std::chrono::seconds document_deadline{60};
  std::uint64_t max_document_bytes = std::uint64_t{32} << 20;
  // No archive download may be larger: one whose size the manifest or index announces stops at
  // that size, one of unknown size (a PEP 503 page gives none) stops here
  // (CUDAENV_MAX_DOWNLOAD_BYTES lowers it).
  std::uint64_t max_download_bytes = untrusted::max_download_size;
  // An Accept header for documents (a package index negotiates JSON or HTML); empty: none.
  std::string accept;
  // Asked while a transfer runs (between chunks, and at least every 200 ms while waiting):
  // true stops it with an error (Ctrl-C, or another archive of the same install failed).
  std::function<bool()> should_stop;
};

// GETs a whole document (a manifest, a directory index). Errors are ErrorKind::network with the
// URL named (a 404 says "not found on the mirror"; the deadline passing says so), and
// ErrorKind::integrity for a document over `max_document_bytes`. `http_status`, when given,
// receives the last HTTP status (0 when there was none); `effective_url`, when given, the URL
// the document came from after redirects (relative links in it resolve against that one).
Result<std::string> fetch_text(const std::string& url, const FetchOptions& options,
                               long* http_status = nullptr, std::string* effective_url = nullptr);

// Bytes received so far, and the total when known.
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

// One archive as a stream of chunks. Bytes already in `cache_file` (an earlier, interrupted run)
// are replayed first; the rest comes from the network with an HTTP Range request, and a dropped
// connection resumes the same way, transparently to the reader. With an `expected_size`, a
// server that sends more stops the stream with ErrorKind::integrity: no byte past the promised
// size is read into memory or the cache. Without one (0: unknown) the same holds for
// FetchOptions::max_download_bytes; an `expected_size` above that fails at the first next().
class ResumableStream {
 public:
  ResumableStream(std::string url, std::filesystem::path cache_file, std::uint64_t expected_size,
                  FetchOptions options, ProgressFn progress = {});
  ~ResumableStream();
  ResumableStream(const ResumableStream&) = delete;
  ResumableStream& operator=(const ResumableStream&) = delete;

  // The next chunk; an empty view once the body is complete. The view stays valid until the
  // next call.
  Result<std::string_view> next();
  // Reads the stream to its end without a consumer (mirror create, re-hashing).
  Status drain();
  std::string sha256_hex() const;
  std::uint64_t bytes() const;
  // Asks a stream blocked in next() on another thread to stop with an error soon.
  void cancel();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// sha256 of a whole file, hex.
Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace cudaenv::fetch
