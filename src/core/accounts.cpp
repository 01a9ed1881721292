#include "core/accounts.hpp"

namespace cudaenv::accounts {

namespace {

Lookup installed;

}  // namespace

void install(const Lookup& lookup) { installed = lookup; }

std::string home() { return installed.home != nullptr ? installed.home() : std::string(); }

std::optional<std::string> user_name(uid_t uid) {
  if (installed.user_name == nullptr) return std::nullopt;
  return installed.user_name(uid);
}

}  // namespace cudaenv::accounts
