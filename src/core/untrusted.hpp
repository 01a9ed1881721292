#pragma once
// The one validator for values that come from outside — a lock, a database, a package index, a
// mirror's manifest, a receipt, a .cudaenv — before they form a path, a shell word, a Tcl or Lua
// string, a recipe line or a URL. Each kind of field has one grammar, kept small on purpose:
// nothing a grammar accepts can climb out of a directory, start an option, quote its way out of
// a string or hold a control character. Callers check at the boundary (the reader of the file)
// and pass only checked values on; docs/security.md lists the grammars.

#include <cstdint>
#include <string_view>

#include "core/error.hpp"

namespace cudaenv::untrusted {

enum class Field {
  release_version,    // a CUDA or cuDNN release: 1-4 dot-separated numbers ("12.4.1", "9.1.0.70")
  component_version,  // a component's version from a manifest ("12.4.127", "2024.1.0+local")
  component_name,     // a component, platform, variant or package key ("cuda_nvcc", "linux-x86_64")
  relative_path,      // a path below a directory or mirror: "cuda_nvcc/linux-x86_64/a.tar.xz"
  gpu_arch,           // "sm_90", "sm_90a", "sm_100f": sm_ and 2-3 digits and an optional letter
  date,               // a calendar day, YYYY-MM-DD
  revision,           // a database revision: a date and an optional ".N" ("2026-11-29.2")
  sha256,             // 64 lowercase hex digits
  url,                // http(s):// or file:// with no spaces, quotes, backslashes or controls
  byte_size,          // a download's size: a whole number of bytes, at most max_download_size
  python_package,     // a PEP 508 distribution name with optional extras: "torch", "jax[cuda12]"
  gpu_model,          // a GPU model's name: "H100", "RTX 4090", "A100-SXM4-80GB"
};

// The largest download a manifest or index may announce (and the ceiling of one whose size is
// not announced): 64 GiB, over ten times NVIDIA's largest archive or wheel.
constexpr std::uint64_t max_download_size = std::uint64_t{64} << 30;

// What the field is, as error messages say it ("a release version (like 12.4.1)").
std::string_view describe(Field field);

bool is_valid(Field field, std::string_view value);

// Ok when `value` is a valid `field`; else an error of `kind` naming where the value came from:
// `<where>: "<value, escaped and cut>" is not <description>`, with the hint that the source is
// corrupt or hostile. `where` is "<file>: <key>" or "<url>: <key>".
Status check(Field field, std::string_view value, std::string_view where,
             ErrorKind kind = ErrorKind::integrity);

// A Field::byte_size as a number, after the check above (`<where>: "<value>" is not ...`).
Result<std::uint64_t> byte_size(std::string_view value, std::string_view where,
                                ErrorKind kind = ErrorKind::integrity);

}  // namespace cudaenv::untrusted
