#pragma once
// `--cudnn PATH`: the cuDNN library verify loads, and the version recorded beside it.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/version.hpp"
#include "install/store.hpp"

namespace cudaenv::verify {

struct CudnnSelection {
  std::string library;                // the file the program dlopens
  std::string directory;              // put first on LD_LIBRARY_PATH for its companion libraries
  std::optional<long long> expected;  // cudnn_version.h's CUDNN_VERSION; nullopt: no header
  std::string header;                 // where `expected` was read
};

// PATH is a cuDNN prefix (lib/ or lib64/ holding libcudnn.so.N, include/cudnn_version.h) or the
// library file itself. ErrorKind::not_found when it holds no libcudnn. A prefix cudaenv installed
// carries a receipt: the version it records is the one expected (else cudnn_version.h's).
Result<CudnnSelection> locate_cudnn(const std::filesystem::path& path);

// A version spec instead of a path: the newest cuDNN cudaenv installed that matches it, built for
// `cuda_major` (cudnn/<version>-cuda<major>/), in the store's root or its system stores (the
// root's wins on equal versions). ErrorKind::not_found names the install command.
Result<CudnnSelection> locate_installed_cudnn(const VersionSpec& spec, const install::Store& store,
                                              int cuda_major);

// CUDNN_VERSION as cudnnGetVersion() returns it: major*10000 + minor*100 + patch from cuDNN 9,
// major*1000 + minor*100 + patch before. nullopt when the text has no CUDNN_MAJOR.
std::optional<long long> parse_cudnn_version_header(std::string_view text);

}  // namespace cudaenv::verify
