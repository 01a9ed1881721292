#pragma once
// The user's global configuration: ${XDG_CONFIG_HOME:-~/.config}/cudaenv/config.toml.
//
//   cuda = "12.4"                  # the global default version spec
//   mirror = "https://mirror.example/compute"
//   source = "pypi"                # where installs come from: "redist" (default) or "pypi"
//   index_url = "https://pypi.example/simple"   # the package index for source = "pypi"
//   framework_index = "https://proxy.example/pytorch/whl"  # stands for download.pytorch.org/whl
//   [download]
//   jobs = 8                       # parallel downloads
//   ca_bundle = "/etc/ssl/corp.pem"
//   stall_timeout = 30             # seconds below 1 KiB/s before a transfer is retried
//
//   modules_dir = "/opt/modulefiles"   # kept current by install/uninstall (docs/cluster.md)
//   modules_format = "lua"             # or "tcl"
//   system_roots = ["/opt/cudaenv"]    # read-only stores; read from the system config

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::project {

struct Config {
  std::optional<std::string> cuda;
  std::optional<std::string> mirror;
  std::optional<std::string> source;     // "redist" or "pypi"; checked where it is used
  std::optional<std::string> index_url;  // a PEP 503/691 simple index
  // Replaces the base of the per-build framework indexes (https://download.pytorch.org/whl) that
  // `lock` reads exact versions from.
  std::optional<std::string> framework_index;
  std::optional<int> jobs;
  std::optional<std::string> ca_bundle;
  std::optional<int> stall_timeout;
  std::optional<std::string> modules_dir;
  std::optional<std::string> modules_format;  // "lua" or "tcl"
  std::vector<std::string> system_roots;      // absolute paths
  // Keys the schema does not know, each with its file:line and a suggestion; ignored. A key that
  // was probably meant as `cuda` (`cdua`, `CUDA`, `cuda` below [download]) in a file without a
  // valid `cuda` is an error instead: the global default must not silently become the system's.
  std::vector<Error> warnings;
};

// A missing file is an empty configuration; a malformed one is an error naming the file and line.
Result<Config> load_config(const std::filesystem::path& path);
// The same for text said to come from `path`.
Result<Config> parse_config(std::string_view text, const std::filesystem::path& path);

}  // namespace cudaenv::project
