#pragma once
// Unpacking an archive stream into a directory with libarchive, refusing every entry that could
// write outside it: absolute paths, "..", links whose target leaves the directory, hard links to
// outside, device nodes and FIFOs. NVIDIA's archives wrap everything in one top directory
// ("cuda_nvcc-linux-x86_64-12.4.131-archive/"); it is stripped. Modes are never taken from the
// archive as they are: directories get 0755, files 0755 when any execute bit is set, else 0644
// (no setuid, setgid or sticky bit, nothing group- or world-writable).
//
// The tree an archive describes is bounded by construction (docs/install.md): each entry is
// placed in a tree of names as it is read, so its checks take time linear in its path and the
// memory grows by one node per new name, however deep the paths. A path of more than max_depth
// names below the prefix, a name over 255 bytes, a path over 1024 bytes, more than max_entries
// files, links and directories, or entry paths adding up to more than 64 MiB fail the
// extraction, as does an entry below a regular file or a link, or a file and a directory of one
// name: "corrupt or hostile archive: <archive>: <entry>: <why>" (exit 6).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "core/error.hpp"

namespace cudaenv::install {

// Supplies the archive's bytes in order; an empty view means the end.
using ChunkSource = std::function<Result<std::string_view>()>;

struct ExtractOptions {
  std::filesystem::path destination;
  std::string archive_name;  // for messages
  // Top-level files such as LICENSE would collide between components; they go to
  // <destination>/<licenses_dir>/<component>/ instead.
  std::string component;
  std::string licenses_dir = "share/licenses";
  // Bytes the entries may unpack to in all (declared sizes and bytes written); 0: no cap.
  std::uint64_t max_unpacked_bytes = 0;
  // A Python wheel instead of a redist archive: the tree below nvidia/<name>/ ("cu13", "cudnn",
  // "cuda_runtime") is the prefix's content, the .dist-info's licenses go to the licenses
  // directory, and the rest (Python package markers, wheel metadata) is skipped. Files under a
  // bin/ directory are made executable: a zip read as a stream carries no modes.
  bool wheel_layout = false;
  // Caps on the tree (see above); NVIDIA's archives nest at most ~20 deep and hold at most a
  // few ten thousand entries.
  std::size_t max_depth = 64;
  std::size_t max_entries = 1000000;
  // Keep only the entries below this directory of the archive ("usr/local/cuda-12.8/compat": a
  // package's tree), placed at the destination's top; the rest is skipped. Empty: strip the one
  // top directory as for NVIDIA's archives.
  std::string subtree = {};
};

// The caps every archive shares: a name (NAME_MAX), an entry's path or link target as the
// archive writes it, and the entry paths of one archive in all.
constexpr std::size_t max_entry_name_bytes = 255;
constexpr std::size_t max_entry_path_bytes = 1024;
constexpr std::uint64_t max_archive_path_bytes = std::uint64_t{64} << 20;

// The unpacked-size cap for an archive of `archive_size` bytes: 64 times its size, at least
// 1 GiB (NVIDIA's archives unpack to 2-4 times their size), so a decompression bomb stops early.
std::uint64_t default_unpacked_cap(std::uint64_t archive_size);

// A wheel entry's path in the prefix (see ExtractOptions::wheel_layout): below nvidia/<name>/,
// or <licenses_dir>/<component>/<file> for the .dist-info's licenses; empty to skip the entry.
std::string wheel_entry_path(std::string_view path, const std::string& component,
                             const std::string& licenses_dir);

// The mode an entry is written with: 0755 for directories, 0755 or 0644 for files.
mode_t sanitized_mode(mode_t type, mode_t archive_mode);

// Adds 022 to the process umask (keeping stricter bits). Call once at start, before any thread:
// libarchive reads the umask by setting it, which must never race with files being created.
void restrict_process_umask();

struct ExtractStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
};

// Errors: ErrorKind::integrity for an unsafe or damaged entry, a tree over the caps (both
// "corrupt or hostile archive: <archive>: <entry>: <why>"), an unreadable archive, or one over
// the unpacked-size cap; the source's own error when it fails; ErrorKind::failure for a local
// write problem (naming the path and the system's reason: disk full, quota, I/O error).
Result<ExtractStats> extract(const ChunkSource& source, const ExtractOptions& options);

// Why an entry path or link target is unsafe (absolute, "..", too long, a name too long, a link
// leaving the prefix); empty when it is safe. Exposed for tests.
std::string unsafe_path_reason(std::string_view path);
std::string unsafe_link_reason(std::string_view entry_path, std::string_view target);

}  // namespace cudaenv::install
