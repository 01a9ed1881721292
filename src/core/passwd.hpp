#pragma once
// The passwd database through glibc's NSS (getpwuid_r: files, sssd, LDAP), as an
// accounts::Lookup. Only the dynamically linked full program links this (library cudaenv_passwd):
// in a static program NSS cannot load its modules (tests/cli/test_shipped_binaries.py checks that
// the front program and the shim carry no NSS function).

#include "core/accounts.hpp"

namespace cudaenv::accounts {

// The lookup the full program installs at start: home and user names from the passwd database.
Lookup passwd_lookup();

}  // namespace cudaenv::accounts
