#pragma once
// How an installed release bundle is laid out, and how `self-update` replaces it in one step.
//
//   <prefix>/lib/cudaenv-bundle/current/     the unpacked bundle: bin/ libexec/ lib/ share/
//   <prefix>/lib/cudaenv-bundle/previous/    the one it replaced, kept for programs still running
//   <prefix>/bin/cudaenv -> ../lib/cudaenv-bundle/current/bin/cudaenv
//   <prefix>/<every other file of the bundle> -> a link through current/ (man page, completions,
//                                                 libexec/cudaenv/cudaenv-shim that shims run)
//
// Every program finds its companions beside its own real path, which is inside one tree, so an
// installation runs one release's programs only. An update unpacks the new tree beside
// current/ and exchanges the two directories in one rename: the installation is wholly old
// before that instant and wholly new after it. A bundle unpacked flat into a prefix (bin/cudaenv
// a file) is moved to this layout by its first update, whose one switch is the rename of a link
// over bin/cudaenv.

#include <filesystem>

#include "core/error.hpp"

namespace cudaenv::install {

// <prefix>/lib/cudaenv-bundle.
std::filesystem::path bundle_directory(const std::filesystem::path& prefix);

// The installation prefix the running cudaenv-full (`executable`) belongs to: for
// <prefix>/lib/cudaenv-bundle/current/libexec/cudaenv/cudaenv-full, or a flat
// <prefix>/libexec/cudaenv/cudaenv-full beside <prefix>/bin/cudaenv. An error anywhere else (a
// build tree): self-update has nothing it may replace there.
Result<std::filesystem::path> running_bundle_prefix(const std::filesystem::path& executable);

// Makes `tree` (a complete unpacked bundle inside bundle_directory(prefix)) the installation's
// release: the switch described above, then the old tree becomes previous/ and every file of the
// new one is linked into the prefix. Errors name the path and the fix; before the switch nothing
// the installation runs was changed.
Status switch_to_bundle(const std::filesystem::path& tree, const std::filesystem::path& prefix);

// Staging directories of updates that were killed (their process is gone): removed.
void remove_abandoned_updates(const std::filesystem::path& prefix);

}  // namespace cudaenv::install
