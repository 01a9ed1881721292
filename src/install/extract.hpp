#pragma once
// Unpacking an archive stream into a directory with libarchive, refusing every entry that could
// write outside it: absolute paths, "..", links whose target leaves the directory, hard links to
// outside, device nodes and FIFOs. NVIDIA's archives wrap everything in one top directory
// ("cuda_nvcc-linux-x86_64-12.4.131-archive/"); it is stripped.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

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
};

struct ExtractStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
};

// Errors: ErrorKind::integrity for an unsafe entry or a corrupt archive (naming the entry),
// the source's own error when it fails, ErrorKind::failure for a local write problem.
Result<ExtractStats> extract(const ChunkSource& source, const ExtractOptions& options);

// Why an entry path or link target is unsafe; empty when it is safe. Exposed for tests.
std::string unsafe_path_reason(std::string_view path);
std::string unsafe_link_reason(std::string_view entry_path, std::string_view target);

}  // namespace cudaenv::install
