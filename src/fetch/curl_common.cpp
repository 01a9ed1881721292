#include "fetch/curl_common.hpp"

#include <algorithm>
#include <mutex>
#include <thread>

namespace cudaenv::fetch::detail {

namespace {

constexpr long stall_speed_bytes = 1024;

}  // namespace

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

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
  // No route to the mirror at all: most often a machine without internet access.
  if (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
      code == CURLE_COULDNT_RESOLVE_PROXY) {
    hint =
        "this machine cannot reach the mirror: point --mirror or CUDAENV_MIRROR at one it can "
        "reach, or build one on a connected machine with 'cudaenv mirror create DIR --cuda "
        "VERSION' and use it here with --mirror file://DIR";
    if (code != CURLE_COULDNT_CONNECT) hint = "the host name does not resolve (DNS); " + hint;
  }
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

void wait_unless_stopped(std::chrono::milliseconds delay, const std::function<bool()>& stop) {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (std::chrono::steady_clock::now() < until && !(stop && stop())) {
    std::this_thread::sleep_for(std::min(delay, std::chrono::milliseconds(100)));
  }
}

}  // namespace cudaenv::fetch::detail
