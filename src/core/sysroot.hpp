#pragma once
// Every read of the machine goes through a Sysroot. Paths given to it are machine paths
// ("/proc/modules"); it maps them below its root, so a test can describe a whole machine as a
// directory tree and CUDAENV_SYSROOT can point cudaenv at a container's or chroot's root.
// Symbolic links are followed inside the root: an absolute link target is re-rooted, never
// allowed to escape to the host.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv {

// The hops taken while resolving a path: for /usr/local/cuda managed by update-alternatives,
// {"/usr/local/cuda", "/etc/alternatives/cuda", "/usr/local/cuda-12.2"}.
struct LinkChain {
  std::vector<std::string> hops;  // the path itself first, then one entry per link followed
  std::string target;             // the final machine path
  bool exists = false;            // the final path exists
};

class Sysroot {
 public:
  explicit Sysroot(std::filesystem::path root = "/");

  bool is_host_root() const { return root_ == "/"; }
  const std::filesystem::path& root() const { return root_; }

  // The host path where a machine path lives.
  std::filesystem::path host_path(const std::string& machine_path) const;
  // The machine path of a host path below the root (the inverse of host_path).
  std::string machine_path(const std::filesystem::path& host) const;

  std::optional<std::string> read_file(const std::string& machine_path) const;
  // As read_file, but through read_bounded_file (core/files.hpp): at most `limit` bytes, opened
  // non-blocking, regular files only, no C++ streams; nullopt for anything else. For the kernel
  // files the prompt hook and detection read.
  std::optional<std::string> read_bounded(const std::string& machine_path, size_t limit) const;
  // The last `bytes` bytes of a file (all of it when shorter): trailers such as a kernel
  // module's signature marker, without reading a 100 MB file whole.
  std::optional<std::string> read_tail(const std::string& machine_path, size_t bytes) const;
  bool exists(const std::string& machine_path) const;
  bool is_directory(const std::string& machine_path) const;
  bool is_executable_file(const std::string& machine_path) const;
  bool is_symlink(const std::string& machine_path) const;
  // Entry names in a directory, sorted; empty when it cannot be read.
  std::vector<std::string> list_directory(const std::string& machine_path) const;

  // Follows links (also in intermediate components) without leaving the root.
  LinkChain resolve(const std::string& machine_path) const;
  // resolve(path).target when it exists.
  std::optional<std::string> canonical(const std::string& machine_path) const;

 private:
  std::filesystem::path root_;
};

}  // namespace cudaenv
