#pragma once
// The glibc a host compiler here builds against: the version its headers declare. What matters
// for a CUDA toolkit is <math.h> (glibc 2.41 declares C23's sinpi/cospi, which clashes with
// older CUDA headers), so the headers are read, not the running libc.

#include <optional>
#include <string_view>

#include "core/sysroot.hpp"
#include "core/version.hpp"

namespace cudaenv::probe {

// __GLIBC__ and __GLIBC_MINOR__ of /usr/include/features.h: 2.41; nullopt when libc6-dev is
// not installed or the file says neither.
std::optional<Version> probe_glibc_headers(const Sysroot& sysroot);

// The same, from the text of a features.h.
std::optional<Version> parse_glibc_features(std::string_view features_h);

}  // namespace cudaenv::probe
