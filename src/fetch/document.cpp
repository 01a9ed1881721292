// fetch_text: a whole document (a manifest, a directory index), bounded in size and time.

#include <array>
#include <chrono>
#include <string>

#include "fetch/curl_common.hpp"
#include "fetch/http.hpp"

namespace cudaenv::fetch {

using detail::apply_common_options;
using detail::global_init;
using detail::is_transient;
using detail::transfer_error;
using detail::wait_unless_stopped;

namespace {

// A document's body, capped; the transfer stops at the first byte over the cap.
struct DocumentBody {
  std::string text;
  std::uint64_t cap = 0;
  bool too_large = false;
};

size_t append_to_document(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<DocumentBody*>(user);
  if (body->text.size() + size * count > body->cap) {
    body->too_large = true;
    return 0;  // libcurl ends the transfer with CURLE_WRITE_ERROR
  }
  body->text.append(data, size * count);
  return size * count;
}

// libcurl's progress callback: a non-zero answer aborts the transfer.
int stop_requested(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* stop = static_cast<const std::function<bool()>*>(user);
  return (*stop && (*stop)()) ? 1 : 0;
}

Error document_too_large(const std::string& url, std::uint64_t cap) {
  return make_error(ErrorKind::integrity,
                    url + ": larger than " + std::to_string(cap) +
                        " bytes, the limit for a manifest or index (CUDAENV_MAX_DOCUMENT_BYTES)",
                    "the mirror does not serve NVIDIA's layout here: check --mirror");
}

Error document_deadline_passed(const std::string& url, std::chrono::seconds deadline) {
  return make_error(ErrorKind::network,
                    url + ": no complete answer within " + std::to_string(deadline.count()) +
                        " s (CUDAENV_DOCUMENT_TIMEOUT)",
                    "the mirror is too slow or never ends its answer: check the network and "
                    "--mirror");
}

Error stopped(const std::string& url) { return make_error(ErrorKind::failure, url + ": stopped"); }

}  // namespace

Result<std::string> fetch_text(const std::string& url, const FetchOptions& options,
                               long* http_status, std::string* effective_url) {
  global_init();
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + options.document_deadline;
  auto backoff = options.first_backoff;
  for (int attempt = 1;; ++attempt) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) return document_deadline_passed(url, options.document_deadline);
    CURL* easy = curl_easy_init();
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    DocumentBody body{{}, options.max_document_bytes, false};
    apply_common_options(easy, url, options, error_buffer.data());
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_to_document);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
                     static_cast<curl_off_t>(options.max_document_bytes));
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, stop_requested);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &options.should_stop);
    const std::string accept_line = "Accept: " + options.accept;
    curl_slist* headers =
        options.accept.empty() ? nullptr : curl_slist_append(nullptr, accept_line.c_str());
    if (headers != nullptr) curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    const CURLcode code = curl_easy_perform(easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    char* landed = nullptr;
    if (effective_url != nullptr &&
        curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &landed) == CURLE_OK && landed != nullptr)
      *effective_url = landed;
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    if (http_status != nullptr) *http_status = status;
    if (code == CURLE_OK) return std::move(body.text);
    if (body.too_large || code == CURLE_FILESIZE_EXCEEDED)
      return document_too_large(url, options.max_document_bytes);
    if (code == CURLE_ABORTED_BY_CALLBACK) return stopped(url);
    if (clock::now() >= deadline) return document_deadline_passed(url, options.document_deadline);
    if (!is_transient(code, status) || attempt >= options.max_attempts) {
      return transfer_error(code, status, url, error_buffer.data());
    }
    wait_unless_stopped(std::min(backoff, std::chrono::duration_cast<std::chrono::milliseconds>(
                                              deadline - clock::now())),
                        options.should_stop);
    backoff *= 2;
  }
}

}  // namespace cudaenv::fetch
