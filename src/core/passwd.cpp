#include "core/passwd.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace cudaenv::accounts {

namespace {

// The passwd entry of `uid`, with a buffer grown until the entry fits (up to 1 MiB).
template <typename Field>
std::optional<std::string> passwd_field(uid_t uid, Field field) {
  const long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 4096);
  struct passwd entry {};
  struct passwd* found = nullptr;
  while (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == ERANGE &&
         buffer.size() < (1U << 20))
    buffer.resize(buffer.size() * 2);
  if (found == nullptr || found->*field == nullptr) return std::nullopt;
  return std::string(found->*field);
}

std::string passwd_home() { return passwd_field(::geteuid(), &passwd::pw_dir).value_or(""); }

std::optional<std::string> passwd_user_name(uid_t uid) {
  return passwd_field(uid, &passwd::pw_name);
}

}  // namespace

Lookup passwd_lookup() { return Lookup{passwd_home, passwd_user_name}; }

}  // namespace cudaenv::accounts
