#pragma once
// `cudaenv uninstall`: which installed prefix a spec names, whether it may go, and removing it
// while other cudaenv processes may be installing it.

#include <functional>
#include <optional>
#include <string>

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

enum class Product { cuda, cudnn };

// What `uninstall` is asked to remove: a spec as `install` takes it ("13.2", "12.4.1", ">=12,<13",
// "latest"); for cuDNN also a build's name ("9.1.0-cuda12"). `cuda_major` keeps only the cuDNN
// builds for that CUDA major (when a toolkit is named in the same command).
struct RemovalRequest {
  Product product = Product::cuda;
  std::string spec;
  std::string flag;  // "SPEC", "--cudnn": named in errors
  std::optional<int> cuda_major;
};

// The one installed prefix the request names. A malformed spec is ErrorKind::usage naming the
// flag; nothing installed matching is ErrorKind::not_found; several matching is ErrorKind::usage
// listing them, so nothing is removed by a guess.
Result<Installed> choose_installed(const Store& store, const RemovalRequest& request);

// The global default: the config's `cuda` spec, its file, and the installed toolkit it selects.
struct PinnedDefault {
  std::string spec;
  fs::path config_file;
  fs::path selects;  // the prefix that spec resolves to now
};

// Refuses (ErrorKind::failure) to remove the toolkit the global config selects unless `force`,
// naming the config file and how to unpin it.
Status check_not_pinned(const Installed& target, const std::optional<PinnedDefault>& pin,
                        bool force);

// Removes an installed prefix (toolkit or cuDNN build) under its install lock: renamed out of
// sight first, then deleted. ErrorKind::not_found when it went away in the meantime.
Status remove_installed(const fs::path& prefix, const std::string& what,
                        const std::function<void()>& on_wait = {});

}  // namespace cudaenv::install
