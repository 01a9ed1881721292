#pragma once
// The effective user's home directory from the passwd database (getpwuid_r, through glibc's NSS:
// files, sssd, LDAP). Only the dynamically linked full program links this: in a static program
// NSS cannot load its modules, and on sssd or LDAP machines the lookup fails or crashes.

#include <string>

namespace cudaenv::paths {

// The home the passwd database gives the effective user; "" when it has none. Installed with
// set_home_lookup (core/paths.hpp) by the full program's main.
std::string passwd_home();

}  // namespace cudaenv::paths
