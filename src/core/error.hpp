#pragma once
// Errors as values. Every fallible domain function returns Result<T>; the command line maps
// ErrorKind to the exit codes of the contract (docs/design.md §4) at its single catch site.

#include <string>
#include <utility>
#include <variant>

namespace cudaenv {

// The numeric values are the process exit codes users and scripts rely on.
enum class ErrorKind {
  failure = 1,
  usage = 2,
  not_found = 3,
  no_compatible_set = 4,
  network = 5,
  integrity = 6,
  verification_failed = 7,
  hangup = 129,       // stopped by SIGHUP (the terminal closed), after cleaning up: 128 + 1
  interrupted = 130,  // stopped by SIGINT (Ctrl-C), likewise: 128 + 2
  terminated = 143,   // stopped by SIGTERM, likewise: 128 + 15
};

struct Error {
  ErrorKind kind = ErrorKind::failure;
  std::string message;  // one line: what went wrong, naming the file or flag
  std::string hint;     // one line: how to fix it; may be empty

  // Prefixes the message with what the caller was doing ("reading /etc/os-release: ...").
  Error with_context(const std::string& what) const& {
    return Error{kind, what + ": " + message, hint};
  }
};

inline Error make_error(ErrorKind kind, std::string message, std::string hint = {}) {
  return Error{kind, std::move(message), std::move(hint)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

struct Ok {};
using Status = Result<Ok>;

}  // namespace cudaenv
