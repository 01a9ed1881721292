#pragma once
// Every copy of a library on the machine, where it comes from and which version it is.

#include <string>
#include <vector>

namespace cudaenv::scan {

struct LibraryCopy {
  std::string path;            // the real file, links resolved
  std::string version;         // "9.10.2", "13.0.96"; empty when unknown
  std::string version_source;  // "file name", "wheel nvidia_cuda_runtime", "soname"
  std::string origin;          // "pip wheel", "toolkit", "system"
};

// The copies of `library` (a soname) in each directory, once per real file, in the order the
// directories are given.
std::vector<LibraryCopy> find_copies(const std::string& library,
                                     const std::vector<std::string>& directories);

// The version of a library file: its real file name's tail (libcudnn.so.9.10.2 → 9.10.2) when
// that is longer than the soname's, else the pip wheel that installed it (its dist-info RECORD
// lists the file), else the soname's number.
LibraryCopy describe_copy(const std::string& path);

// The directories pip's NVIDIA wheels put libraries in under a site-packages directory
// (nvidia/cudnn/lib, nvidia/cu13/lib, …).
std::vector<std::string> wheel_library_directories(const std::string& site_packages);

}  // namespace cudaenv::scan
