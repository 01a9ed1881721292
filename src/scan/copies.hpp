#pragma once
// Every copy of a library on the machine, where it comes from and which version it is.

#include <optional>
#include <string>
#include <vector>

namespace cudaenv::scan {

struct LibraryCopy {
  std::string path;     // the real file, links resolved
  std::string version;  // "9.10.2", "13.0.96"; empty when unknown
  std::string
      version_source;  // "the library's ELF", "file name", "wheel nvidia_cudnn_cu13", "soname"
  std::string origin;  // "pip wheel", "toolkit", "system"
};

// Entries read from one directory listing (a site-packages, its nvidia/, a store's toolkits):
// far above a real one (a large venv holds a few thousand), a bound on a hostile tree's cost.
inline constexpr size_t max_listed_entries = 20000;
// Directories searched for copies at most; the rest are not looked at.
inline constexpr size_t max_copy_directories = 4096;

// The copies of `library` (a soname) in each directory, once per real file, in the order the
// directories are given.
std::vector<LibraryCopy> find_copies(const std::string& library,
                                     const std::vector<std::string>& directories);

// The version of a library file, from the first source that has it: the library's own ELF
// (cuDNN exports its version as data; libcudnn.so.9 forwards to libcudnn_graph.so.9 beside it,
// whose ELF holds it), its real file name's tail (libcudnn.so.9.10.2 → 9.10.2) when that is
// longer than the soname's, the pip wheel that installed it (its dist-info RECORD lists the
// file), else the soname's number. Nothing is loaded or run.
LibraryCopy describe_copy(const std::string& path);

struct PipDistribution {
  std::string name;     // as its dist-info directory spells it: "nvidia_cufft"
  std::string version;  // "12.0.0.61"
  std::string project;  // as its METADATA names it, what pip takes: "nvidia-cufft"
};

// The pip distribution whose installed RECORD lists a file below a site-packages (or
// dist-packages) directory; nullopt outside one or when no RECORD lists it.
std::optional<PipDistribution> pip_distribution_of(const std::string& path);

// The directories pip's NVIDIA wheels put libraries in under a site-packages directory
// (nvidia/cudnn/lib, nvidia/cu13/lib, …).
std::vector<std::string> wheel_library_directories(const std::string& site_packages);

// A directory the environment says a library should come from: the project's pinned cuDNN or
// toolkit, or the toolkit $CUDA_HOME names.
struct PinnedDirectory {
  std::string what;       // "the pinned cuDNN 9.1 (from /repo/.cudaenv)"
  std::string directory;  // its library directory
  std::string
      pin_command;  // pins another version when the version is appended: "cudaenv use 13.0 --cudnn"
};

struct Mismatch {
  std::string message;  // "the pinned cuDNN 9.1 (…) has libcudnn.so.9 9.1.0, but 9.8.0 loads"
  std::string fix;      // every way out, most local first
};

// The first pin whose directory holds `library` decides: when another copy of another version
// loads, the mismatch and its fixes — scope LD_LIBRARY_PATH when that brought the other copy,
// uninstall or remove the stray copy, or pin to match it. `loaded_from` is the directory the
// loader found it in and `found_by` the search step that found it ("LD_LIBRARY_PATH").
std::optional<Mismatch> pinned_mismatch(const std::string& library, const LibraryCopy& loaded,
                                        const std::string& loaded_from, const std::string& found_by,
                                        const std::vector<PinnedDirectory>& pins);

}  // namespace cudaenv::scan
