#pragma once
// NVIDIA's redistributable manifests, redistrib_<version>.json: per component, per platform
// (and for cuDNN per CUDA variant) the archive's relative path, sha256 and size. They come from
// the network, so everything in them is validated before use: every field has its type, hashes
// are 64 hex digits, sizes are whole numbers, component, platform and variant names and versions
// are short plain names (no '/', no "..", no control characters), and relative paths can never
// leave the mirror's directory.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"

namespace cudaenv::manifest {

struct RedistFile {
  std::string relative_path;  // below <base>/<product>/redist/
  std::string sha256;         // lower-case hex
  std::uint64_t size = 0;
};

struct RedistComponent {
  std::string key;      // "cuda_nvcc"
  std::string name;     // "CUDA NVCC"
  std::string license;  // "CUDA Toolkit"
  std::optional<Version> version;
  // "linux-x86_64" for plain entries, "linux-x86_64/cuda12" for cuDNN's per-CUDA variants.
  std::map<std::string, RedistFile> files;
};

struct RedistManifest {
  std::string release_label;  // absent before CUDA 12.2; empty then
  std::string release_date;
  std::vector<RedistComponent> components;

  const RedistComponent* component(const std::string& key) const;
};

// Parses and validates a redistrib JSON document; `origin` names it in errors (a URL or path).
// Text that is not a JSON object is ErrorKind::failure (a wrong URL, a cut transfer); a missing or
// wrongly typed field, an unsafe name or path and a malformed sha256 are ErrorKind::integrity,
// each naming the origin, the component and the field.
Result<RedistManifest> parse_redist(std::string_view text, const std::string& origin);

// The file for a platform, or for a platform and CUDA variant ("cuda12").
const RedistFile* redist_file(const RedistComponent& component, const std::string& platform,
                              const std::string& variant = {});

}  // namespace cudaenv::manifest
