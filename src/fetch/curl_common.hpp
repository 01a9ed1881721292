#pragma once
// What the document and the archive transfers share: libcurl's setup, which failures are worth
// another attempt, the error a failed transfer reports, and an interruptible wait.

#include <chrono>
#include <functional>
#include <string>

#include <curl/curl.h>

#include "core/error.hpp"
#include "fetch/http.hpp"

namespace cudaenv::fetch::detail {

void global_init();
// Failures worth another attempt: the network or the server hiccupped.
bool is_transient(CURLcode code, long http_status);
Error transfer_error(CURLcode code, long http_status, const std::string& url, const char* detail);
void apply_common_options(CURL* easy, const std::string& url, const FetchOptions& options,
                          char* error_buffer);
// Waits `delay`, waking early when the transfer is asked to stop.
void wait_unless_stopped(std::chrono::milliseconds delay, const std::function<bool()>& stop);

}  // namespace cudaenv::fetch::detail
