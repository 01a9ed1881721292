#pragma once
// Who a uid is and where the user's home is, as the passwd database says: through glibc's NSS
// (files, sssd, LDAP), which a statically linked program cannot use (it cannot load NSS's modules;
// on sssd or LDAP machines the lookup fails or crashes). So core only holds the lookup a program
// installs: the full program installs the passwd one (core/passwd.hpp); the static front program
// and shim install none, and get "unknown" answers.

#include <optional>
#include <string>

#include <sys/types.h>

namespace cudaenv::accounts {

struct Lookup {
  std::string (*home)() = nullptr;                           // the effective user's; "" if none
  std::optional<std::string> (*user_name)(uid_t) = nullptr;  // nullopt if unknown
};

// Called once at the start of a program; an empty Lookup removes it.
void install(const Lookup& lookup);

// The effective user's home directory from the installed lookup; "" without one.
std::string home();

// "alice" for uid 1000, from the installed lookup; nullopt without one or when it does not know.
std::optional<std::string> user_name(uid_t uid);

}  // namespace cudaenv::accounts
