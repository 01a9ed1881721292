#pragma once
// `cudaenv uninstall`: removing a toolkit while other cudaenv processes may be installing it.

#include <functional>

#include "core/error.hpp"
#include "core/version.hpp"
#include "install/store.hpp"

namespace cudaenv::install {

// Removes the installed toolkit `version` while holding the same lock an install of that version
// takes: an install or uninstall of it in progress finishes first (`on_wait` is called once,
// before blocking, when one is), so neither ever sees the other's half-done prefix.
// ErrorKind::not_found when it is not installed.
Status uninstall(const Store& store, const Version& version,
                 const std::function<void()>& on_wait = {});

// The lock file guarding the install prefix `target` (<parent>/.lock-<name>).
fs::path install_lock_file(const fs::path& target);

}  // namespace cudaenv::install
